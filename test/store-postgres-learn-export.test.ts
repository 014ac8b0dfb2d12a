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
