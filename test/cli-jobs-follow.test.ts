import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { spawnStacks, startTestServer, tempDir, waitFor, type TestServer } from './helpers/server.ts';
import { writeBundle } from './helpers/bundles.ts';
import { isOneLine, runCli } from './helpers/cli.ts';
import { JobCancelled } from '../server/jobs/queue.ts';

/**
 * `stacks jobs follow ID` against a running server: locally on its data dir, and remotely with
 * --url/--api-key. The jobs run in the server (this process); the followed steps are driven here.
 */
let s: TestServer;
const gates: (() => void)[] = [];
const nextStep = () => gates.shift()?.();

before(async () => {
  s = await startTestServer();
  s.services.jobs.register<{ total: number; fail?: boolean }>('test-steps', async ({ job, progress, signal }) => {
    const { total, fail } = job.payload;
    for (let done = 0; done < total; done++) {
      progress({ phase: 'stepping', done, total });
      await new Promise<void>((resolve, reject) => {
        gates.push(resolve);
        signal.addEventListener('abort', () => reject(signal.reason instanceof Error ? signal.reason : new JobCancelled('cancelled')), { once: true });
      });
    }
    progress({ phase: 'done', done: total, total });
    if (fail) throw new Error('the last step broke');
  });
});

after(async () => {
  await s?.close();
});

interface Followed {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function follow(args: string[]): Followed {
  const child = spawnStacks(['jobs', 'follow', ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

async function killed<T>(f: Followed, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    if (f.child.exitCode === null) f.child.kill();
  }
}

test('jobs follow --url shows the live progress of a job running in the server and ends with its final state', async () => {
  const { id } = await s.services.jobs.enqueue('test-steps', { total: 3 });
  const f = follow([String(id), '--url', s.url, '--api-key', s.key]);
  await killed(f, async () => {
    for (let done = 0; done < 3; done++) {
      await waitFor(() => f.stderr().includes(`job ${id} test-steps: running: stepping ${done}/3`), 60_000);
      nextStep();
    }
    assert.equal(await f.exit, 0, f.stderr());
  });
  assert.equal(f.stdout(), `Job ${id} (test-steps) succeeded.\n`);
  assert.match(f.stderr(), new RegExp(`job ${id} test-steps: succeeded 3/3`));
});

test('jobs follow on the local data dir: a failed job ends with exit 1 and its error (JSON with --json)', async () => {
  const { id } = await s.services.jobs.enqueue('test-steps', { total: 1, fail: true });
  const f = follow([String(id), '--data-dir', s.dataDir, '--dev', '--json']);
  await killed(f, async () => {
    await waitFor(() => f.stderr().includes(`job ${id} test-steps: running: stepping 0/1`), 60_000);
    nextStep();
    assert.equal(await f.exit, 1, f.stderr());
  });
  const job = JSON.parse(f.stdout()) as { id: number; state: string; error: string; progress: { done: number } };
  assert.deepEqual([job.id, job.state, job.error, job.progress.done], [id, 'failed', 'the last step broke', 1]);
});

test('jobs follow: a job cancelled over the API ends the follow with exit 1', async () => {
  const { id } = await s.services.jobs.enqueue('test-steps', { total: 5 });
  const f = follow([String(id), '--url', `${s.url}/api`, '--key', s.key, '--no-progress']);
  await killed(f, async () => {
    await waitFor(async () => (await s.services.jobs.get(id)).state === 'running', 30_000);
    // The follower has read the job at least once when it is waiting (its first read needs no output: poll the server's view).
    await new Promise((r) => setTimeout(r, 500));
    const res = await s.api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal(await f.exit, 1, f.stderr());
  });
  assert.match(f.stdout(), new RegExp(`^Job ${id} \\(test-steps\\) cancelled`));
  assert.equal(f.stderr(), '', '--no-progress prints no progress');
});

test('jobs follow --url follows an import started over the API', async () => {
  const file = path.join(tempDir(), 'bundle.json');
  await writeBundle(file, [{ project: '/acme/followed', snippets: 300 }]);
  const res = await s.api('/api/import-libraries', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new Uint8Array(await import('node:fs').then((fs) => fs.readFileSync(file))),
  });
  assert.equal(res.status, 200);
  const { jobs } = (await res.json()) as { jobs: { jobId: number }[] };
  const r = await runCli(['jobs', 'follow', String(jobs[0]!.jobId), '--url', s.url, '--api-key', s.key, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const job = JSON.parse(r.stdout) as { kind: string; state: string; libraryId: string; progress: { snippets: number } };
  assert.deepEqual([job.kind, job.state, job.libraryId, job.progress.snippets], ['import', 'succeeded', '/acme/followed', 300]);
});

test('jobs follow: an unknown job, a wrong key, a bad URL are one-line errors', async () => {
  for (const [args, pattern] of [
    [['999999', '--data-dir', s.dataDir], /No job with id 999999/],
    [['999999', '--url', s.url, '--api-key', s.key], /No job with id 999999/],
    [['1', '--url', s.url, '--api-key', 'stk_wrong'], /API key is invalid/],
    [['1', '--url', s.url], /API key is required/],
    [['1', '--url', 'ftp://example.com'], /--url must be an http\(s\) URL/],
  ] as const) {
    const r = await runCli(['jobs', 'follow', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(isOneLine(r.stderr), r.stderr);
    assert.match(r.stderr, pattern);
  }
});
