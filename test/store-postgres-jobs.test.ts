// The job rows on both backends: SQLite's JobStore and PostgreSQL's PgJobStore answer the same calls
// the same way, and on PostgreSQL several nodes claiming at once never take the same job.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../server/store/db.ts';
import { JobStore } from '../server/store/jobs.ts';
import { LibraryStore } from '../server/store/libraries.ts';
import { PgLibraryStore } from '../server/store/pg/libraries.ts';
import { PgJobStore } from '../server/store/pg/jobs.ts';
import { migratePg } from '../server/store/pg/migrate.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import type { SameShape } from '../server/store/pg/same-shape.ts';
import { asAsync, startPostgres, type TestPostgres } from './helpers/postgres.ts';

type Jobs = SameShape<JobStore>;

const sqliteJobs = (): Jobs => {
  const db = openDb(':memory:');
  return asAsync(new JobStore(db, new LibraryStore(db)));
};
const pgJobs = (pool: PgPool): PgJobStore => new PgJobStore(pool, new PgLibraryStore(pool));

const T0 = '2026-11-28T10:00:00.000Z';
const T1 = '2026-11-28T10:00:05.000Z';
const T2 = '2026-11-28T10:01:00.000Z';

/** The same story told to either backend; returns what it saw, to compare the two. */
async function story(jobs: Jobs): Promise<unknown[]> {
  const seen: unknown[] = [];
  const a = await jobs.insert('import', { file: 'a.zip' }, null, null, T0);
  const learn = await jobs.insert('learn', {}, null, null, T0);
  const b = await jobs.insert('crawl', { url: 'http://x' }, null, null, T0);
  seen.push(await jobs.position(learn, ['learn']), await jobs.position(b, ['learn']), await jobs.queuedBesides(['learn']));
  const first = await jobs.claim(['import', 'learn', 'crawl'], 'node-a:1:x', T0, ['learn']);
  const second = await jobs.claim(['import', 'learn', 'crawl'], 'node-b:2:y', T0, ['learn']);
  seen.push(first?.id === a, second?.id === b, first?.state, first?.attempts, first?.startedAt);
  // each owner beats (and holds) only its own job
  const label = (ids: number[]) => ids.map((id) => (id === a ? 'a' : 'b'));
  seen.push(label(await jobs.heartbeat([a, b], 'node-a:1:x', T1)), label(await jobs.heartbeat([a, b], 'node-b:2:y', T1)));
  seen.push((await jobs.runningOwners()).map((o) => [o.id === a ? 'a' : 'b', o.owner, o.heartbeatAt]));
  // an orphan seen with an old heartbeat stays with its owner once the owner beat again; seen as it is, it goes back, and its owner has lost it
  const [stale] = (await jobs.runningOwners()).filter((o) => o.id === b);
  await jobs.heartbeat([b], 'node-b:2:y', T2);
  seen.push(await jobs.requeueIfUnchanged([stale], T2), await jobs.requeueIfUnchanged([{ ...stale, heartbeatAt: T2 }], T2));
  seen.push(await jobs.heartbeat([b], 'node-b:2:y', T2));
  await jobs.claim(['crawl'], 'node-b:2:y', T2);
  seen.push(await jobs.requeue([b, learn], T1)); // learn is queued, not running: only b goes back
  // progress and the end are written by the job's owner only, the end once
  seen.push(await jobs.setProgress(a, { done: 2 }, T1, 'node-b:2:y'), await jobs.setProgress(a, { done: 3 }, T1, 'node-a:1:x'));
  seen.push(await jobs.finish(a, 'failed', 'not mine', T1, null, 'node-b:2:y'));
  seen.push(await jobs.finish(a, 'failed', 'the archive is not a zip', T1, 'invalid_archive', 'node-a:1:x'));
  seen.push(await jobs.finish(a, 'succeeded', null, T2, null, 'node-a:1:x'));
  await jobs.requestCancel(learn, T1);
  seen.push(await jobs.isCancelRequested(learn), await jobs.isCancelRequested(b));
  const got = await jobs.get(a);
  seen.push(got && { ...got, id: 'a' });
  seen.push(await jobs.counts(), await jobs.counts(7));
  seen.push(
    (await jobs.list({ state: 'queued' })).map((j) => j.kind),
    (await jobs.list({ limit: 2 })).map((j) => j.kind),
  );
  seen.push((await jobs.active('crawl', 'nope')).length, await jobs.get(9999));
  // check-then-queue in one transaction: the second ask finds the first's job
  const u1 = await jobs.insertUnless('crawl', {}, '/o/lib', null, T1, null, { kinds: ['crawl'] });
  const u2 = await jobs.insertUnless('crawl', {}, '/o/lib', null, T1, null, { kinds: ['crawl'] });
  seen.push(u1.created, u2.created, u1.id === u2.id, (await jobs.cancelRequested([learn, b, a])).length);
  const queued = await jobs.queueEach(
    ['/o/lib', '/o/other', '/o/other'],
    (lib) => ({ kind: 'crawl', libraryId: String(lib), tag: '' }),
    (lib, view) => (view.pending.length > 0 ? { skip: 'pending' } : { kind: 'crawl', payload: {}, libraryId: String(lib), memberId: null, teamspaceId: null }),
    T1,
  );
  seen.push(queued.map((q) => ('skip' in q ? q.skip : 'queued')));
  return seen;
}

describe('job rows on SQLite and PostgreSQL', () => {
  let server: TestPostgres;
  let pool: PgPool;
  before(async () => {
    server = await startPostgres('debian');
    pool = openPgPool(server.url);
    await migratePg(pool);
  });
  after(async () => {
    await pool?.end();
    await server?.close();
  });

  test('both backends tell the same story', async () => {
    const onSqlite = await story(sqliteJobs());
    const onPg = await story(pgJobs(pool));
    assert.deepEqual(onPg, onSqlite);
    // and the story is the one expected, not just the same on both
    assert.deepEqual(onSqlite.slice(0, 8), [3, 2, true, true, true, 'running', 1, T0]);
    assert.deepEqual(onSqlite.slice(8, 10), [['a'], ['b']]);
    assert.deepEqual(onSqlite.slice(11, 19), [0, 1, [], 1, false, true, false, true]);
    assert.equal(onSqlite[19], false);
    assert.deepEqual(onSqlite.slice(-5), [true, false, true, 1, ['pending', 'queued', 'pending']]);
  });

  test('nodes claiming at once each get a different job, and every job is taken once', async () => {
    await pool.query('DELETE FROM jobs');
    const setup = pgJobs(pool);
    const ids = new Set<number>();
    for (let i = 0; i < 120; i++) ids.add(await setup.insert('import', { i }, null, null, T0));
    const nodes = Array.from({ length: 4 }, () => openPgPool(server.url, { max: 3 }));
    try {
      const taken = await Promise.all(
        nodes.map(async (node, n) => {
          const jobs = pgJobs(node);
          const mine: number[] = [];
          // three claim loops per node, as a queue with a concurrency of three would run
          await Promise.all(
            [0, 1, 2].map(async () => {
              for (let job = await jobs.claim(['import'], `node-${n}:1:q`, T0); job; job = await jobs.claim(['import'], `node-${n}:1:q`, T0)) mine.push(job.id);
            }),
          );
          return mine;
        }),
      );
      const all = taken.flat();
      assert.equal(all.length, ids.size, 'each job claimed exactly once');
      assert.deepEqual(new Set(all), ids);
      assert.ok(
        taken.every((t) => t.length > 0),
        `every node worked: ${taken.map((t) => t.length).join(', ')}`,
      );
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM jobs WHERE state = 'running' AND attempts = 1");
      assert.equal(rows[0].n, ids.size);
    } finally {
      await Promise.all(nodes.map((p) => p.end()));
    }
  });
});
