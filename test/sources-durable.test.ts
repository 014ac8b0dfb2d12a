import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startFixtureServer } from './helpers/fixtures.ts';
import { startTestServer } from './helpers/server.ts';
import { waitJob, snippetsOf, stagingEntries, postJson } from './helpers/sources.ts';

test('a queued source job keeps its staged input across a restart and runs after it', async (t) => {
  const fixtures = await startFixtureServer();
  t.after(() => fixtures.close());
  const s = await startTestServer();
  t.after(() => s.close());
  let s2: Awaited<ReturnType<typeof startTestServer>> | null = null;
  try {
    await s.services.jobs.stop(); // nothing runs: the job stays queued
    const r = await postJson(s, '/api/v2/add/openapi', { openApiUrl: `${fixtures.url}/files/openapi/uspto.openapi.yaml` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await s.services.jobs.get(r.body.jobId as number)).state, 'queued');
    assert.equal(stagingEntries(s).length, 1, 'the fetched spec is staged');
    await s.close();

    s2 = await startTestServer({ dataDir: s.dataDir });
    const job = await waitJob(s2, r.body.jobId as number);
    assert.equal(job.state, 'succeeded', job.error ?? '');
    assert.equal((await snippetsOf(s2, r.body.libraryName as string)).filter((x) => x.kind === 'code').length, 3);
    assert.deepEqual(stagingEntries(s2), []);
  } finally {
    await s2?.close();
  }
});

test('abandoned staged folders are swept; folders of queued jobs and fresh ones are kept', async () => {
  const s = await startTestServer();
  try {
    await s.services.jobs.stop();
    const root = s.services.sources.stagingRoot;
    const abandoned = s.services.sources.newStagingDir();
    const fresh = s.services.sources.newStagingDir();
    const queued = s.services.sources.newStagingDir();
    fs.writeFileSync(path.join(abandoned, 'input.txt'), 'x');
    const old = new Date(Date.now() - 2 * 3600_000);
    for (const d of [abandoned, queued]) fs.utimesSync(d, old, old);
    await s.services.store.jobs.insert('source-files', { stagedDir: queued }, '/files/x', null, new Date().toISOString());
    assert.equal(await s.services.sources.sweepStaging(), 1);
    assert.deepEqual(fs.readdirSync(root).sort(), [path.basename(fresh), path.basename(queued)].sort());
  } finally {
    await s.close();
  }
});
