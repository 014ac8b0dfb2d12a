import { test } from 'node:test';
import os from 'node:os';
import assert from 'node:assert/strict';
import { Store } from '../server/store/index.ts';
import { JobLeaseLost, JobQueue } from '../server/jobs/queue.ts';
import { createLogger } from '../server/log.ts';
import { tempDir, waitFor } from './helpers/server.ts';

const log = createLogger('silent');

test('jobs: a second process on the same data dir leaves running jobs alone; a graceful stop requeues them', async () => {
  const dir = tempDir();
  const storeA = Store.open(dir);
  const storeB = Store.open(dir);
  const a = new JobQueue(storeA, log, 1);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let runs = 0;
  a.register('slow', async ({ signal }) => {
    runs++;
    await Promise.race([gate, new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)))]);
  });
  a.start();
  const { id } = await a.enqueue('slow', {});
  await waitFor(async () => (await storeA.jobs.get(id))?.state === 'running');

  // Another queue (e.g. a CLI command) starting on the same database must not take the job.
  const b = new JobQueue(storeB, log, 1);
  b.register('slow', async () => {
    runs++;
  });
  b.start();
  await new Promise((r) => setTimeout(r, 700));
  assert.equal((await storeB.jobs.get(id))?.state, 'running');
  assert.equal(runs, 1);
  await b.stop();

  // A graceful stop puts the interrupted job back in the queue for the next start.
  await a.stop();
  assert.equal((await storeA.jobs.get(id))?.state, 'queued');
  release();

  const c = new JobQueue(storeA, log, 1);
  c.register('slow', async () => {
    runs++;
  });
  c.start();
  await waitFor(async () => (await storeA.jobs.get(id))?.state === 'succeeded');
  assert.equal((await storeA.jobs.get(id))?.attempts, 2);
  await c.stop();
  storeA.close();
  storeB.close();
});

test('jobs: a process whose job another process took over (its heartbeats missed) stops, and the job ends once, as its new owner ends it', async () => {
  const dir = tempDir();
  const storeA = Store.open(dir);
  const storeB = Store.open(dir);
  const a = new JobQueue(storeA, log, 1);
  let reason: unknown = null;
  // A handler that goes on to the end after the abort: what it reports then must not count.
  a.register('slow', async ({ signal, progress }) => {
    progress({ by: 'a' });
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    reason = signal.reason;
    progress({ by: 'a, after losing it' });
  });
  a.start();
  const { id } = await a.enqueue('slow', {});
  await waitFor(async () => (await storeA.jobs.get(id))?.state === 'running');
  assert.deepEqual(a.leases(), { held: 1, lost: 0, recovered: 0 });
  // What another node's orphan check does when A's heartbeat is stale (A stalled, or lost the database for a minute).
  assert.equal(await storeB.jobs.requeueIfUnchanged(await storeB.jobs.runningOwners(), new Date().toISOString()), 1);
  const b = new JobQueue(storeB, log, 1);
  b.register('slow', async ({ progress }) => progress({ by: 'b' }));
  b.start();
  await waitFor(async () => (await storeB.jobs.get(id))?.state === 'succeeded');
  await waitFor(() => reason !== null, 15_000);
  assert.ok(reason instanceof JobLeaseLost, String(reason));
  // A counts the lease it lost once its handler has unwound; B ran the job on a lease it holds no more
  await waitFor(() => a.leases().lost === 1);
  assert.deepEqual(
    [a.leases(), b.leases()],
    [
      { held: 0, lost: 1, recovered: 0 },
      { held: 0, lost: 0, recovered: 0 },
    ],
  );
  await a.stop();
  await b.stop();
  const job = await storeA.jobs.get(id);
  assert.deepEqual([job?.state, job?.progress, job?.attempts], ['succeeded', { by: 'b' }, 2]);
  storeA.close();
  storeB.close();
});

test('jobs: a queue counts the jobs it queued again because their owner is gone, and runs them', async () => {
  const store = Store.open(tempDir());
  // A job left running by a queue of this process that no longer exists (as one killed on another node, once its heartbeat is stale).
  const id = await store.jobs.insert('quick', {}, null, null, new Date().toISOString(), null);
  assert.equal((await store.jobs.claim(['quick'], `${os.hostname()}:${process.pid}:gone-queue`, new Date().toISOString(), []))?.id, id);
  const q = new JobQueue(store, log, 1);
  q.register('quick', async () => undefined);
  q.start();
  await waitFor(async () => (await store.jobs.get(id))?.state === 'succeeded' && q.leases().held === 0);
  assert.deepEqual(q.leases(), { held: 0, lost: 0, recovered: 1 });
  await q.stop();
  store.close();
});

test('jobs: cancel a queued job and a running one', async () => {
  const store = Store.open(tempDir());
  const q = new JobQueue(store, log, 1);
  q.register('wait', async ({ signal }) => {
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  });
  q.start();
  const first = await q.enqueue('wait', {});
  const second = await q.enqueue('wait', {});
  assert.equal(second.position, 1, 'the second job waits behind the first');
  await waitFor(async () => (await store.jobs.get(first.id))?.state === 'running');
  assert.equal((await q.cancel(second.id)).state, 'cancelled');
  await q.cancel(first.id);
  await waitFor(async () => (await store.jobs.get(first.id))?.state === 'cancelled');
  await q.stop();
  store.close();
});

test('jobs: a cancel written by another process (the CLI) stops a running job within a tick', async () => {
  const dir = tempDir();
  const store = Store.open(dir);
  const other = Store.open(dir);
  const q = new JobQueue(store, log, 1);
  q.register('wait', async ({ signal }) => {
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  });
  q.start();
  const { id } = await q.enqueue('wait', {});
  await waitFor(async () => (await store.jobs.get(id))?.state === 'running');
  await other.jobs.requestCancel(id, new Date().toISOString());
  await waitFor(async () => (await store.jobs.get(id))?.state === 'cancelled', 5_000);
  await q.stop();
  other.close();
  store.close();
});

test('jobs: background kinds (model learning) wait while any other job is queued, and their queue position says so', async () => {
  const dir = tempDir();
  const store = Store.open(dir);
  const q = new JobQueue(store, log, 1);
  const order: string[] = [];
  q.register('learn', async ({ job }) => void order.push(`learn ${(job.payload as { n: number }).n}`), { background: true });
  q.register('import', async () => void order.push('import'));
  // Queued before the queue starts: three background jobs, then one a user waits for.
  const learn = [1, 2, 3].map(async (n) => (await q.enqueue('learn', { n })).id);
  const imp = q.enqueue('import', {});
  assert.equal((await imp).position, 1, 'the import goes first');
  assert.equal(await q.position(await learn[0]!), 2);
  q.start();
  await q.idle();
  await q.stop();
  assert.deepEqual(order, ['import', 'learn 1', 'learn 2', 'learn 3']);
  store.close();
});
