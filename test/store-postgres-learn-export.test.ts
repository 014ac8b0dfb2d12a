// What needed the SQLite file, on PostgreSQL too: a version's ranking model learned in a worker
// thread reading PostgreSQL, and an export read from one PostgreSQL snapshot. One library copied
// from a SQLite data dir into PostgreSQL 15 (no pgvector: the node's exact vector scan, as sqlite-vec
// scans) must learn the same model and export the same bundle on both backends.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { learnInWorker } from '../server/search/learn-thread.ts';
import { copyStoreToPostgres } from '../server/system/store-copy.ts';
import { ExportService, type ExportPlan } from '../server/ingest/export.ts';
import { PgExportSnapshot } from '../server/store/pg/export.ts';
import { openPgPool } from '../server/store/pg/pool.ts';
import { OPERATOR } from '../lib/model.ts';

let pg: TestPostgres;
let s: TestServer;
let url: string;
let versionId: number;

before(async () => {
  [pg, s] = await Promise.all([startPostgres('debian'), startTestServer()]);
  await s.services.jobs.stop();
  await loadSearchCorpus(s.services, ['pino']);
  versionId = s.services.store.libraries.currentVersion('/pinojs/pino', '')!.id;
  url = await pg.createDatabase('aux');
  await copyStoreToPostgres(s.dataDir, url);
});

after(async () => {
  await s?.close();
  await pg?.close();
});

test('a version learns the same ranking model from PostgreSQL as from SQLite, in a worker thread reading PostgreSQL', async () => {
  const embedder = s.services.embedder;
  const fromSqlite = await learnInWorker({ backend: 'sqlite', file: s.services.store.file! }, embedder, versionId);
  const fromPostgres = await learnInWorker({ backend: 'postgres', url }, embedder, versionId);
  assert.ok(fromSqlite.report.questions >= 100, JSON.stringify(fromSqlite.report));
  assert.deepEqual(fromPostgres, fromSqlite);
});

test('an export read from one PostgreSQL snapshot is the same bundle, byte for byte, as from SQLite', async () => {
  const pool = openPgPool(url, { max: 2 });
  try {
    const fromPostgres = new ExportService({ snapshot: () => PgExportSnapshot.open(pool), access: () => s.services.access });
    const read = async (plan: ExportPlan) => {
      let text = '';
      for await (const chunk of plan.chunks()) text += chunk;
      return text;
    };
    const fromSqlite = await read(await s.services.exporter.plan(OPERATOR, ['/pinojs/pino']));
    assert.ok(fromSqlite.length > 100_000 && (JSON.parse(fromSqlite) as { libraries: unknown[] }).libraries.length === 1);
    // A write after the plan was made (its snapshot taken) is not in the bundle; a later export has it.
    const plan = await fromPostgres.plan(OPERATOR, ['/pinojs/pino']);
    await pool.query("UPDATE snippets SET title = title || ' (changed)' WHERE version_id = $1", [versionId]);
    try {
      assert.equal(await read(plan), fromSqlite);
      assert.notEqual(await read(await fromPostgres.plan(OPERATOR, ['/pinojs/pino'])), fromSqlite);
    } finally {
      await pool.query("UPDATE snippets SET title = left(title, -length(' (changed)')) WHERE version_id = $1", [versionId]);
    }
    // A library missing is refused before anything is read, and the snapshot's connection goes back to the pool.
    await assert.rejects(fromPostgres.plan(OPERATOR, ['/no/such']), /No library \/no\/such/);
    assert.equal(pool.totalCount, pool.idleCount);
  } finally {
    await pool.end();
  }
});
