// Two Stacks nodes (real `stacks serve` processes, each with its own data dir) on one PostgreSQL
// (Debian's 15): what one node writes, the other serves; a node killed with SIGKILL in the middle of
// an import or of a crawl leaves its job to the other, which finishes it with nothing lost and
// nothing doubled; one key's requests spread over both nodes hit the rate limit exactly.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { createFixtureServer, listen, type FixtureServer } from './helpers/fixtures.ts';
import { assertImportedOnce, writeBundle } from './helpers/bundles.ts';
import { bundlePath } from './eval/bundles.ts';
import { devLicense, startStacksProcess, stopProcess, tempDir, waitFor, type StacksProcess } from './helpers/server.ts';
import { PgStore } from '../server/store/pg/index.ts';

let pg: TestPostgres;
const running: StacksProcess[] = [];

before(async () => {
  pg = await startPostgres('debian');
});

after(async () => {
  await Promise.all(running.map((p) => stopProcess(p.child, 'SIGKILL')));
  await pg?.close();
});

/** A node: `stacks serve` on its own data dir (with the dev license), its state in `url`. */
async function node(url: string, env: NodeJS.ProcessEnv = {}): Promise<StacksProcess> {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  const p = await startStacksProcess({ dataDir, args: ['--dev'], env: { STACKS_DATABASE_URL: url, STACKS_SEARCH_WORKERS: '0', ...env } });
  running.push(p);
  return p;
}

function client(key: string) {
  return (base: string, p: string, init: RequestInit = {}) =>
    fetch(`${base}${p}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
}

interface JobView {
  state: string;
  attempts: number;
  error: string | null;
  progress: Record<string, number | undefined>;
}

async function finished(api: ReturnType<typeof client>, base: string, jobId: number): Promise<JobView> {
  return (await waitFor(
    async () => {
      const j = (await (await api(base, `/api/jobs/${jobId}`)).json()) as JobView;
      return ['succeeded', 'failed', 'cancelled'].includes(j.state) ? j : null;
    },
    120_000,
    100,
  ))!;
}

test('two nodes: a library imported through A is answered by B; A killed mid-import, B finishes the job with every snippet once', async () => {
  const url = await pg.createDatabase('nodes_import');
  const a = await node(url);
  const b = await node(url);
  const key = a.key!;
  assert.ok(key, 'the first node to start prints the owner key');
  assert.equal(b.key, null, 'the second node finds the key in the shared database');
  const api = client(key);

  // Import on A, answered by B.
  const small = await api(a.url, '/api/import-libraries', { method: 'POST', body: new Uint8Array(fs.readFileSync(bundlePath('pino'))) });
  assert.equal(small.status, 200, await small.clone().text());
  const smallJob = ((await small.json()) as { jobs: { jobId: number }[] }).jobs[0]!.jobId;
  assert.equal((await finished(api, b.url, smallJob)).state, 'succeeded');
  const ctx = await api(b.url, '/api/v2/context?libraryId=/pinojs/pino&query=child+logger&type=json');
  assert.equal(ctx.status, 200, await ctx.clone().text());
  assert.ok(((await ctx.json()) as { codeSnippets?: unknown[]; infoSnippets?: unknown[] }).codeSnippets?.length, 'B answers from the library A imported');

  const health = (await (await fetch(`${b.url}/api/health`)).json()) as { database: { status: string; backend: string; pool: { total: number } | null } };
  assert.equal(health.database.status, 'ok');
  assert.equal(health.database.backend, 'postgres');
  assert.ok(health.database.pool && health.database.pool.total >= 1, JSON.stringify(health.database));

  // A killed in the middle of a big import: B takes the job over.
  // Large enough that A is still importing when it is killed, also on a loaded machine (12,000 once finished first).
  const N = 24_000;
  const bundle = path.join(tempDir(), 'big.json');
  await writeBundle(bundle, [{ project: '/crash/lib', snippets: N, seed: 7 }]);
  const big = await api(a.url, '/api/import-libraries', { method: 'POST', body: new Uint8Array(fs.readFileSync(bundle)) });
  assert.equal(big.status, 200);
  const jobId = ((await big.json()) as { jobs: { jobId: number }[] }).jobs[0]!.jobId;
  await waitFor(
    async () => {
      const j = (await (await api(b.url, `/api/jobs/${jobId}`)).json()) as JobView;
      assert.notEqual(j.state, 'succeeded', 'the import finished before the kill; make the bundle bigger');
      return j.state === 'running' && (j.progress.snippets ?? 0) >= 4000;
    },
    60_000,
    20,
  );
  await stopProcess(a.child, 'SIGKILL');
  const done = await finished(api, b.url, jobId);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  assert.equal(done.attempts, 2, 'B ran the job again after A died');

  const store = await PgStore.open(url, { poolSize: 2 });
  try {
    await assertImportedOnce(store, '/crash/lib', N);
  } finally {
    await store.close();
  }
});

/** The fixture site with a delay per request, so that a crawl is still running when its node is killed. */
function slowFixtures(delayMs: number): Promise<FixtureServer> {
  const handler = createFixtureServer({ quiet: true }).listeners('request')[0] as http.RequestListener;
  return listen(http.createServer((req, res) => setTimeout(() => handler(req, res), delayMs)));
}

test('two nodes: A killed mid-crawl, B finishes the crawl; every page fetched and stored once', async () => {
  const site = await slowFixtures(120);
  try {
    const url = await pg.createDatabase('nodes_crawl');
    const a = await node(url);
    const b = await node(url);
    const api = client(a.key!);
    const res = await api(a.url, '/api/parse-website', { method: 'POST', body: JSON.stringify({ websiteUrl: `${site.url}/static/`, maxPages: 200 }) });
    assert.equal(res.status, 200, await res.clone().text());
    const { queueId, project } = (await res.json()) as { queueId: number; project: string };
    // Whichever node claimed the crawl is killed once it is well under way.
    const mid = (await waitFor(
      async () => {
        const j = (await (await api(b.url, `/api/jobs/${queueId}`)).json()) as JobView;
        return (j.progress.pagesDone ?? 0) >= 12 ? j : null;
      },
      60_000,
      50,
    ))!;
    assert.equal(mid.state, 'running');
    const store = await PgStore.open(url, { poolSize: 2 });
    try {
      const owner = (await store.jobs.runningOwners()).find((j) => j.id === queueId)?.owner ?? '';
      const [victim, survivor] = owner.includes(`:${a.child.pid}:`) ? [a, b] : [b, a];
      await stopProcess(victim.child, 'SIGKILL');
      const done = await finished(api, survivor.url, queueId);
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
      assert.equal(done.attempts, 2, 'the other node ran the crawl again');
      assert.equal(done.progress.pagesDone, 46);
      assert.equal(done.progress.pagesFailed, 0);

      const entries = await store.crawl.entries(queueId);
      assert.equal(entries.filter((e) => e.httpStatus === 200).length, 46, 'every page fetched and recorded once');
      const version = await store.libraries.currentVersion(project, '');
      const snippets = await store.snippets.list(version!.id, 100_000);
      const keys = snippets.map((x) => `${x.kind}|${x.sourceId}|${x.contentHash}`);
      assert.ok(keys.length > 0);
      assert.equal(new Set(keys).size, keys.length, 'no snippet stored twice');
    } finally {
      await store.close();
    }
  } finally {
    await site.close();
  }
});

test('two nodes: one key spread over both hits the per-minute limit exactly', async () => {
  const LIMIT = 12;
  const url = await pg.createDatabase('nodes_limits');
  const a = await node(url, { STACKS_RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  const b = await node(url, { STACKS_RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  const api = client(a.key!);
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT + 6; i++) {
    const res = await api(i % 2 === 0 ? a.url : b.url, '/api/v2/libs/search?libraryName=pino&query=logger');
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  // Past the limiter, an empty instance answers 404 (no such library); the limiter's refusal is 429.
  assert.deepEqual(statuses, [...new Array(LIMIT).fill(404), ...new Array(6).fill(429)], `statuses: ${statuses.join(' ')}`);
});
