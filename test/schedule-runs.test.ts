// A cron schedule that every node sharing one database fires runs once per due time: on one SQLite
// file shared by several processes' connections, and on PostgreSQL shared by several nodes' pools.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import cron from 'node-cron';
import { runOnceAcrossNodes } from '../server/jobs/cron.ts';
import { Store } from '../server/store/index.ts';
import { migratePg } from '../server/store/pg/migrate.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import { PgScheduleStore } from '../server/store/pg/schedules.ts';
import type { ScheduleStore } from '../server/store/schedules.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { tempDir } from './helpers/server.ts';

type Runs = Pick<ScheduleStore, 'claim'>;

/**
 * Each node schedules the same every-second task (same name, as every node's schedule names it)
 * until `due` due times have passed on the first node's clock; the due times each node ran.
 */
async function fireOnEveryNode(nodes: Runs[], due: number): Promise<string[][]> {
  const ran = nodes.map(() => [] as string[]);
  const fired: string[] = [];
  const tasks = nodes.map((runs, i) =>
    cron.schedule(
      '* * * * * *',
      (ctx) => {
        ran[i]!.push(ctx.date.toISOString());
      },
      { name: 'crawl /org/lib', noOverlap: true, ...runOnceAcrossNodes(runs) },
    ),
  );
  // Every node's task fires each second; the skips tell when a due time was decided on a node that lost it.
  for (const t of tasks) t.on('execution:skipped', (ctx) => void fired.push(ctx.date.toISOString()));
  await new Promise<void>((resolve) => {
    const enough = () => {
      if (new Set(ran.flat()).size >= due) resolve();
    };
    tasks[0]!.on('execution:finished', enough);
    tasks[0]!.on('execution:skipped', enough);
  });
  await Promise.all(tasks.map((t) => t.destroy()));
  assert.ok(fired.length > 0, 'the other nodes fired the same due times and were not elected');
  return ran;
}

function assertOncePerDueTime(ran: string[][], due: number): void {
  const all = ran.flat();
  assert.ok(new Set(all).size >= due, `${new Set(all).size} due times ran`);
  assert.equal(all.length, new Set(all).size, `a due time ran on two nodes: ${JSON.stringify(ran)}`);
}

test('processes sharing one SQLite file run each due time of a schedule once', async () => {
  const dir = tempDir();
  const stores = [Store.open(dir), Store.open(dir), Store.open(dir)];
  after(() => stores.forEach((s) => s.close()));
  assert.equal(path.basename(stores[0]!.file), 'stacks.db');
  assertOncePerDueTime(
    await fireOnEveryNode(
      stores.map((s) => s.schedules),
      3,
    ),
    3,
  );
  // a due time is taken once, whoever asks first; expired runs are dropped
  const [a, b] = stores.map((s) => s.schedules);
  assert.deepEqual(
    [
      await a!.claim('k:1', '2026-11-29T00:00:00.000Z', '2026-11-29T01:00:00.000Z'),
      await b!.claim('k:1', '2026-11-29T00:00:01.000Z', '2026-11-29T01:00:01.000Z'),
      await b!.claim('k:1', '2026-11-29T01:00:00.000Z', '2026-11-29T02:00:00.000Z'),
    ],
    [true, false, true],
  );
});

describe('nodes sharing one PostgreSQL database', () => {
  let server: TestPostgres;
  const pools: PgPool[] = [];
  before(async () => {
    server = await startPostgres('debian');
    pools.push(...Array.from({ length: 4 }, () => openPgPool(server.url, { max: 2 })));
    await migratePg(pools[0]!);
  });
  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await server?.close();
  });

  test('run each due time of a schedule once', async () => {
    assertOncePerDueTime(
      await fireOnEveryNode(
        pools.map((p) => new PgScheduleStore(p)),
        3,
      ),
      3,
    );
  });

  test('take each run once when they all ask at once', async () => {
    const stores = pools.map((p) => new PgScheduleStore(p));
    const keys = Array.from({ length: 20 }, (_, i) => `backup:2026-11-29T00:${String(i).padStart(2, '0')}:00.000Z`);
    const won = await Promise.all(stores.flatMap((s) => keys.map((k) => s.claim(k, '2026-11-29T00:00:00.000Z', '2026-11-29T01:00:00.000Z'))));
    assert.equal(won.filter(Boolean).length, keys.length);
  });
});
