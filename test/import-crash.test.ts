import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { devLicense, startStacksProcess, tempDir, waitFor } from './helpers/server.ts';
import { assertImportedOnce, writeBundle } from './helpers/bundles.ts';
import { Store } from '../server/store/index.ts';

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

test('kill -9 in the middle of an import: after restart the job reruns; nothing lost or duplicated', async () => {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  const bundle = path.join(tempDir(), 'big.json');
  // Six batches of the import job's 2,000: the kill comes after the second, with four to spare.
  const N = 12_000;
  await writeBundle(bundle, [{ project: '/crash/lib', snippets: N, seed: 7 }]);

  let server = await startStacksProcess({ dataDir, args: ['--dev'] });
  const key = server.key!;
  assert.ok(key, 'first start prints the owner key');
  try {
    const res = await fetch(`${server.url}/api/import-libraries`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: new Uint8Array(fs.readFileSync(bundle)),
    });
    assert.equal(res.status, 200);
    const { jobs } = (await res.json()) as { jobs: { jobId: number }[] };
    const jobId = jobs[0]!.jobId;
    // Wait until some batches are stored, then kill the server hard.
    await waitFor(
      async () => {
        const job = (await (await fetch(`${server.url}/api/jobs/${jobId}`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
          state: string;
          progress: { snippets?: number };
        };
        assert.notEqual(job.state, 'succeeded', 'the import finished before the kill; make the bundle bigger');
        return (job.progress.snippets ?? 0) >= 4000;
      },
      60_000,
      20,
    );
    await stop(server.child, 'SIGKILL');

    const before = Store.open(dataDir);
    try {
      const building = await before.libraries.buildingVersionForJob(jobId);
      assert.ok(building, 'an unfinished build was left behind by the crash');
      const partial = (await before.snippets.totals(building.id)).snippets;
      assert.ok(partial > 0 && partial < N, `partial build has ${partial} snippets`);
      assert.equal(before.libraries.currentVersion('/crash/lib', ''), null, 'nothing is served yet');
      assert.equal((await before.jobs.get(jobId))!.state, 'running');
    } finally {
      before.close();
    }

    server = await startStacksProcess({ dataDir, args: ['--dev'] });
    assert.equal(server.key, null, 'no new key on restart');
    await waitFor(
      async () => {
        const job = (await (await fetch(`${server.url}/api/jobs/${jobId}`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
          state: string;
          attempts: number;
          error: string | null;
        };
        assert.ok(job.state === 'queued' || job.state === 'running' || job.state === 'succeeded', `job ${job.state}: ${job.error}`);
        return job.state === 'succeeded' && job.attempts === 2;
      },
      90_000,
      100,
    );
    await stop(server.child, 'SIGTERM');

    const after = Store.open(dataDir);
    try {
      await assertImportedOnce(after, '/crash/lib', N);
    } finally {
      after.close();
    }
    assert.deepEqual(fs.readdirSync(path.join(dataDir, 'uploads/staged')), [], 'staged file removed after success');
  } finally {
    await stop(server.child, 'SIGKILL');
  }
});
