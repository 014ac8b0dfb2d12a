import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { startTestServer, tempDir, waitFor, type TestServer } from './helpers/server.ts';
import { writeBundle } from './helpers/bundles.ts';

const LIB = '/atomic/lib';

async function importFile(s: TestServer, file: string, force: boolean): Promise<number> {
  const res = await s.api(`/api/import-libraries?force=${force}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new Uint8Array(fs.readFileSync(file)),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { jobs: { jobId: number }[] };
  assert.equal(body.jobs.length, 1);
  return body.jobs[0]!.jobId;
}

/** Samples the served version from another thread (its own connection) until stopped. */
function startSampler(dataDir: string) {
  const stopFlag = new SharedArrayBuffer(4);
  const script = new URL('./helpers/version-sampler.ts', import.meta.url).href;
  const worker = new Worker(new URL('./helpers/tsx-worker.mjs', import.meta.url), { workerData: { script, dataDir, libraryId: LIB, stopFlag } });
  const ready = new Promise<void>((resolve) => worker.once('message', () => resolve()));
  return {
    ready,
    async stop(): Promise<{ samples: number; seen: Record<string, number> }> {
      const result = new Promise<{ samples: number; seen: Record<string, number> }>((resolve, reject) => {
        worker.on('message', resolve);
        worker.once('error', reject);
      });
      Atomics.store(new Int32Array(stopFlag), 0, 1);
      Atomics.notify(new Int32Array(stopFlag), 0);
      return result;
    },
  };
}

test('forced re-import swaps atomically; failed or cancelled re-imports leave the old version served', async () => {
  const s = await startTestServer();
  const dir = tempDir();
  const files = { old: path.join(dir, 'old.json'), new: path.join(dir, 'new.json'), bad: path.join(dir, 'bad.json') };
  const N_OLD = 3000;
  // Three batches of the import job's 2,000: the swap follows a build of several transactions.
  const N_NEW = 6000;
  await writeBundle(files.old, [{ project: LIB, snippets: N_OLD, marker: 'old', seed: 1 }]);
  await writeBundle(files.new, [{ project: LIB, snippets: N_NEW, marker: 'new', seed: 2 }]);
  await writeBundle(files.bad, [{ project: LIB, snippets: 8000, marker: 'bad', seed: 3 }]);
  try {
    await importFile(s, files.old, false);
    await s.services.jobs.idle();
    assert.equal(s.services.store.libraries.currentVersion(LIB, '')!.totalSnippets, N_OLD);

    // Readers on another thread while the new version is written and swapped in.
    const sampler = startSampler(s.dataDir);
    await sampler.ready;
    const jobId = await importFile(s, files.new, true);
    await s.services.jobs.idle();
    await new Promise((r) => setTimeout(r, 100));
    const { samples, seen } = await sampler.stop();
    assert.equal((await s.services.jobs.get(jobId)).state, 'succeeded');
    assert.ok(samples > 50, `only ${samples} samples`);
    assert.deepEqual(Object.keys(seen).sort(), [`${N_NEW}|${N_NEW}|new`, `${N_OLD}|${N_OLD}|old`].sort(), `states seen by readers: ${JSON.stringify(seen)}`);
    assert.equal(s.services.store.libraries.versions(LIB).length, 1, 'the old version was purged after the swap');

    // A re-import whose job fails half-way (the staged file is damaged after validation).
    await s.services.jobs.stop();
    const failing = await importFile(s, files.bad, true);
    const staged = path.resolve(s.dataDir, String((await s.services.jobs.get(failing)).payload.file));
    const lines = fs.readFileSync(staged, 'utf8').split('\n');
    lines[5000] = 'c{"id": damaged';
    fs.writeFileSync(staged, lines.join('\n'));
    s.services.jobs.start();
    await s.services.jobs.idle();
    const failed = s.services.jobs.get(failing);
    assert.equal((await failed).state, 'failed');
    assert.match((await failed).error ?? '', /damaged at line 5001/);
    assert.ok(Number((await failed).progress.snippets) >= 4000, 'it failed after storing batches');
    const current = s.services.store.libraries.currentVersion(LIB, '')!;
    assert.equal(current.totalSnippets, N_NEW, 'the served version is untouched');
    assert.ok((await s.services.store.snippets.list(current.id, 1))[0]!.title.startsWith('new '));
    assert.equal(s.services.store.libraries.versions(LIB).length, 1, 'the failed build was thrown away');
    assert.ok(!fs.existsSync(staged), 'staged file removed after a permanent failure');

    // A cancelled re-import: same guarantee.
    const cancelled = await importFile(s, files.bad, true);
    await waitFor(async () => Number((await s.services.jobs.get(cancelled)).progress.snippets ?? 0) >= 2000, 60_000, 5);
    const res = await s.api(`/api/jobs/${cancelled}/cancel`, { method: 'POST' });
    assert.equal(res.status, 200);
    await s.services.jobs.idle();
    assert.equal((await s.services.jobs.get(cancelled)).state, 'cancelled');
    assert.equal(s.services.store.libraries.currentVersion(LIB, '')!.totalSnippets, N_NEW);
    assert.equal(s.services.store.libraries.versions(LIB).length, 1);
    assert.deepEqual(fs.readdirSync(path.join(s.dataDir, 'uploads/staged')), []);
  } finally {
    await s.close();
  }
});
