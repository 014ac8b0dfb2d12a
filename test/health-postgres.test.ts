// /api/health's and /metrics' figures of a node on PostgreSQL, at the function level (healthReport,
// Metrics) over a real PgStore: the backend, this node's pool (connections open, idle, and queries
// waiting for one) and its job leases. The server on PostgreSQL is checked end to end with two nodes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { JobQueue } from '../server/jobs/queue.ts';
import { loadConfig } from '../server/config.ts';
import { readModelPin } from '../server/embed/model.ts';
import { createServices } from '../server/services.ts';
import { LicenseFile, LicenseService, loadVerifyKeys } from '../server/license/license.ts';
import { createLogger } from '../server/log.ts';
import { Metrics } from '../server/metrics/metrics.ts';
import { Store } from '../server/store/index.ts';
import { PgStore } from '../server/store/pg/index.ts';
import { healthReport } from '../server/system/health.ts';
import { parsePrometheus, samplesOf } from './helpers/prometheus.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { tempDir } from './helpers/server.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** A data dir holding a damaged copy of the model: a node on it falls back to the word vectors (as in test/embed-model.test.ts). */
function dataDirWithDamagedModel(): string {
  const pin = readModelPin();
  const dataDir = tempDir();
  const dir = path.join(dataDir, 'models', pin.dir);
  fs.mkdirSync(dir, { recursive: true });
  const bytes = fs.readFileSync(path.join(ROOT, 'data', 'models', pin.dir, 'model.onnx'));
  bytes[bytes.length - 1]! ^= 1;
  fs.writeFileSync(path.join(dir, 'model.onnx'), bytes);
  fs.copyFileSync(path.join(ROOT, 'data', 'models', pin.dir, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
  return dataDir;
}

describe("a PostgreSQL node's health and metrics", () => {
  let server: TestPostgres;
  let store: PgStore;
  // The leases are the job queue's memory, the same on both backends; this queue is not started.
  let queueStore: Store;
  let jobs: JobQueue;
  before(async () => {
    server = await startPostgres('debian');
    store = await PgStore.open(await server.createDatabase('health'), { poolSize: 2 });
    // The node's policy copy checks for changes in the background; stopped, nothing but this test uses the pool.
    store.teams.policy.close();
    queueStore = Store.open(tempDir());
    jobs = new JobQueue(queueStore, createLogger('silent'), 1);
  });
  after(async () => {
    await store?.close();
    queueStore?.close();
    await server?.close();
  });

  const health = () =>
    healthReport({
      license: new LicenseService(loadVerifyKeys(path.join(ROOT, 'licenses')), new LicenseFile(path.join(tempDir(), 'license.json')), false),
      store,
      jobs,
      embedder: null,
      startedAt: new Date(),
    });

  test('the backend and the pool: both connections busy, a third query waits, and the figures say so', async () => {
    const idle = await health();
    assert.equal(idle.status, 'ok');
    const pool = idle.database.pool;
    assert.deepEqual([idle.database.status, idle.database.backend, pool && pool.idle === pool.total, pool?.waiting], ['ok', 'postgres', true, 0]);
    assert.deepEqual(idle.queue.leases, { held: 0, lost: 0, recovered: 0 });
    assert.equal(idle.queue.jobs?.queued, 0);

    const metrics = new Metrics({
      // not the pool's: the scrape below runs while the test holds every connection
      jobCounts: () => queueStore.jobs.counts(),
      databaseBytes: () => ({}),
      catalog: async () => ({ libraries: 0, versions: 0, snippets: 0 }),
      workers: () => ({ live: 0, inFlight: 0 }),
      caches: () => ({}),
      database: () => ({ backend: store.backend, pool: store.poolStats() }),
      leases: () => jobs.leases(),
    });
    // both connections of the pool taken, a query waiting for one
    const held = [await store.pool.connect(), await store.pool.connect()];
    const waiting = store.pool.query('SELECT 1');
    try {
      assert.deepEqual(store.poolStats(), { size: 2, total: 2, idle: 0, waiting: 1 });
      const m = parsePrometheus(await metrics.text());
      const value = (name: string) => samplesOf(m, name).map((x) => x.value);
      assert.deepEqual(
        samplesOf(m, 'stacks_database_info').map((x) => [x.labels.backend, x.value]),
        [['postgres', 1]],
      );
      const gauges = ['size', 'connections', 'idle_connections', 'waiting'].map((g) => value(`stacks_database_pool_${g}`));
      assert.deepEqual([...gauges, value('stacks_job_leases_held')], [[2], [2], [0], [1], [0]]);
    } finally {
      for (const c of held) c.release();
    }
    await waiting;
    assert.deepEqual((await health()).database.pool, { size: 2, total: 2, idle: 2, waiting: 0 });
  });

  test("a node whose sentence model is unavailable stops and says why rather than replace the cluster's model vectors", async () => {
    const url = await server.createDatabase('fallback');
    const stores = [await PgStore.open(url, { poolSize: 2 }), await PgStore.open(url, { poolSize: 2 })];
    try {
      for (const s of stores) s.teams.policy.close();
      const [cluster, node] = stores as [PgStore, PgStore];
      await cluster.vectors.ensure('model:all-MiniLM-L6-v2:0123456789ab', 384);
      const config = loadConfig({ dataDir: dataDirWithDamagedModel(), embedProvider: 'model', databaseUrl: url }, {});
      await assert.rejects(
        createServices(config, createLogger('silent'), { store: node }),
        /would run builtin:.*because .*sha256.*database's vectors are model:all-MiniLM-L6-v2:0123456789ab:384:int8/,
      );
      assert.equal(await cluster.vectors.filledBy(), 'model:all-MiniLM-L6-v2:0123456789ab:384:int8', 'the cluster keeps its vectors');
    } finally {
      for (const s of stores) await s.close();
    }
  });
});
