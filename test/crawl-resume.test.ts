import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { devLicense, startStacksProcess, startTestServer, stopProcess, tempDir, waitFor, type StacksProcess } from './helpers/server.ts';
import { createFixtureServer, listen, type FixtureServer } from './helpers/fixtures.ts';
import { Store } from '../server/store/index.ts';
import { operatorSubmitter } from '../lib/owner.ts';

/** The fixture server with a delay per request, so that a crawl is still running when its server is killed. */
function slowFixtures(delayMs: number): Promise<FixtureServer> {
  const handler = createFixtureServer({ quiet: true }).listeners('request')[0] as http.RequestListener;
  return listen(http.createServer((req, res) => setTimeout(() => handler(req, res), delayMs)));
}

const kill = (child: ChildProcess): Promise<void> => stopProcess(child, 'SIGKILL');

test('crash and resume: a server killed with SIGKILL mid-crawl resumes the job; no page lost or indexed twice', async () => {
  const site = await slowFixtures(120);
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  let first: StacksProcess | null = null;
  let second: StacksProcess | null = null;
  try {
    first = await startStacksProcess({ dataDir, args: ['--dev'] });
    assert.ok(first.key, 'first start prints the owner key');
    const key = first.key!;
    const firstUrl = first.url;
    const api = (base: string, p: string, init: RequestInit = {}) =>
      fetch(`${base}${p}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
    const res = await api(firstUrl, '/api/parse-website', { method: 'POST', body: JSON.stringify({ websiteUrl: `${site.url}/static/`, maxPages: 200 }) });
    assert.equal(res.status, 200);
    const { queueId, project } = (await res.json()) as { queueId: number; project: string };
    const mid = await waitFor(
      async () => {
        const j = (await (await api(firstUrl, `/api/jobs/${queueId}`)).json()) as { state: string; progress: { pagesDone?: number } };
        return (j.progress.pagesDone ?? 0) >= 12 ? j : null;
      },
      60_000,
      50,
    );
    assert.equal(mid!.state, 'running');
    await kill(first.child);

    second = await startStacksProcess({ dataDir, args: ['--dev'] });
    const done = await waitFor(
      async () => {
        const j = (await (await api(second!.url, `/api/jobs/${queueId}`)).json()) as { state: string; attempts: number; progress: Record<string, number> };
        return ['succeeded', 'failed', 'cancelled'].includes(j.state) ? j : null;
      },
      90_000,
      200,
    );
    assert.equal(done!.state, 'succeeded', JSON.stringify(done));
    assert.equal(done!.attempts, 2, 'the job ran again after the restart');
    assert.equal(done!.progress.pagesDone, 46);
    assert.equal(done!.progress.pagesFailed, 0);
    await kill(second.child);
    second = null;

    // Compare with an uninterrupted crawl of the same site.
    const store = Store.open(dataDir);
    const entries = await store.crawl.entries(queueId);
    const crashed = await store.snippets.list(store.libraries.currentVersion(project, '')!.id, 100_000);
    store.close();
    assert.equal(entries.filter((e) => e.httpStatus === 200).length, 46, 'every page fetched and recorded once');
    const keys = crashed.map((x) => `${x.kind}|${x.sourceId}|${x.contentHash}`);
    assert.equal(new Set(keys).size, keys.length, 'no snippet stored twice');

    const ref = await startTestServer();
    try {
      const r = await ref.services.crawler.submit(
        { websiteUrl: `${site.url}/static/`, maxPages: 200 },
        operatorSubmitter(ref.services.teams.defaultTeamspaceId(), 'instance'),
      );
      await waitFor(async () => ['succeeded', 'failed'].includes((await ref.services.jobs.get(r.jobId)).state), 60_000);
      const clean = await ref.services.store.snippets.list(ref.services.store.libraries.currentVersion(r.libraryId, '')!.id, 100_000);
      const cleanKeys = new Set(clean.map((x) => `${x.kind}|${x.contentHash}`));
      const crashedKeys = new Set(crashed.map((x) => `${x.kind}|${x.contentHash}`));
      assert.equal(crashed.length, clean.length, 'same number of snippets as an uninterrupted crawl');
      assert.deepEqual([...crashedKeys].sort(), [...cleanKeys].sort());
    } finally {
      await ref.close();
    }
  } finally {
    if (first) await kill(first.child);
    if (second) await kill(second.child);
    await site.close();
  }
});
