// Backups of an instance in PostgreSQL (15, Debian's): the archive keeps its format (SQLite files
// copied out of one PostgreSQL snapshot), so it restores into a fresh PostgreSQL database (emptied
// and filled in one transaction) and into a SQLite data dir, and both answer as the instance did.
// A restore is refused while a Stacks process is connected to the database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { createLogger } from '../server/log.ts';
import { BackupService } from '../server/backup/service.ts';
import { postgresDatabases, restoreArchiveToPostgres } from '../server/backup/postgres.ts';
import { restoreArchive } from '../server/backup/restore.ts';
import { answerForVersionAsync } from '../server/search/pipeline.ts';
import { prepareQuery } from '../server/search/query.ts';
import { copyStoreToPostgres } from '../server/system/store-copy.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import { PgSearchStore } from '../server/store/pg/search.ts';
import { PgTermStore } from '../server/store/pg/terms.ts';
import { PgSnippetStore } from '../server/store/pg/snippets.ts';
import { PgSearchModelStore } from '../server/store/pg/search-models.ts';
import { pgVersionReads } from '../server/store/pg/version-reads.ts';

const QUESTION = 'redact secrets from logs';
const CONTEXT = `/api/v2/context?libraryId=/pinojs/pino&query=${encodeURIComponent(QUESTION)}&type=json`;

let pg: TestPostgres;
let s: TestServer;
let source: { url: string; pool: PgPool };
let versionId: number;
let answered: unknown;
const pools: PgPool[] = [];

/** The test's own connections are not named as Stacks': a restore counts only those as running nodes. */
function poolOf(url: string, applicationName = 'test'): PgPool {
  const pool = openPgPool(url, { max: 2, applicationName });
  pools.push(pool);
  return pool;
}

before(async () => {
  [pg, s] = await Promise.all([startPostgres('debian'), startTestServer()]);
  await s.services.jobs.stop();
  await loadSearchCorpus(s.services, ['pino']);
  versionId = s.services.store.libraries.currentVersion('/pinojs/pino', '')!.id;
  // A metered question: usage rows, which live in usage.db on SQLite and in the same database on PostgreSQL.
  const res = await s.api(CONTEXT);
  assert.equal(res.status, 200);
  answered = await res.json();
  const url = await pg.createDatabase('source');
  await copyStoreToPostgres(s.dataDir, url);
  source = { url, pool: poolOf(url) };
});

after(async () => {
  await s?.close();
  await Promise.all(pools.map((p) => p.end()));
  await pg?.close();
});

/** The answer of PostgreSQL's pipeline to the question (ids and scores), in one snapshot. */
async function pgAnswer(pool: PgPool): Promise<[number, number][]> {
  const search = new PgSearchStore(pool);
  const reads = pgVersionReads({ search, terms: new PgTermStore(pool), snippets: new PgSnippetStore(pool), models: new PgSearchModelStore(pool) });
  const q = await prepareQuery(QUESTION, s.services.embedder);
  const list = await search.snapshot(() => answerForVersionAsync(reads, q, { versionId, libraryId: '/pinojs/pino' }));
  return list.map((c) => [c.snippet.id, c.score]);
}

async function counts(pool: PgPool): Promise<Record<string, number>> {
  const { rows } = await pool.query<Record<string, number>>(
    `SELECT (SELECT count(*) FROM snippets)::int AS snippets, (SELECT count(*) FROM snippet_vec)::int AS vectors,
            (SELECT count(*) FROM usage_daily)::int AS usage, (SELECT count(*) FROM api_keys)::int AS keys, (SELECT count(*) FROM audit_log)::int AS audit`,
  );
  return rows[0]!;
}

test('a PostgreSQL instance backed up restores into a fresh PostgreSQL database and into a SQLite data dir, answering the same', async () => {
  const node = tempDir();
  fs.writeFileSync(path.join(node, 'license.json'), fs.readFileSync(path.join(s.dataDir, 'license.json')));
  const backups = new BackupService({
    snapshot: postgresDatabases(source.url),
    dataDir: node,
    backupDir: path.join(node, 'backups'),
    keep: 2,
    log: createLogger('silent'),
  });
  const r = await backups.create('cli');
  assert.equal(r.libraries, 1);
  assert.ok(r.snippets > 300, String(r.snippets));

  // Into a fresh PostgreSQL database: the same rows (derived search side included) and the same answer.
  const url = await pg.createDatabase('restored');
  const restoredDir = tempDir();
  const done = await restoreArchiveToPostgres(r.file, restoredDir, url);
  assert.equal(done.libraries, 1);
  assert.equal(fs.readFileSync(path.join(restoredDir, 'license.json'), 'utf8'), fs.readFileSync(path.join(node, 'license.json'), 'utf8'));
  const target = poolOf(url);
  const before = await counts(source.pool);
  assert.ok(before.usage > 0 && before.vectors > 0);
  assert.deepEqual(await counts(target), before);
  const expected = await pgAnswer(source.pool);
  assert.ok(expected.length > 0);
  assert.deepEqual(await pgAnswer(target), expected);

  // Into a SQLite data dir: a server there answers as the original did.
  const sqliteDir = tempDir();
  await restoreArchive(r.file, sqliteDir);
  const back = await startTestServer({ dataDir: sqliteDir });
  try {
    const res = await back.api(CONTEXT, { auth: null });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), answered);
  } finally {
    await back.close();
  }
});

test('a restore into PostgreSQL replaces what the database holds, and is refused while a Stacks process is connected to it', async () => {
  const url = await pg.createDatabase('replaced');
  // It holds an instance already: the copy of the source, plus a library the archive does not have.
  await copyStoreToPostgres(s.dataDir, url);
  const target = poolOf(url);
  await target.query(
    "INSERT INTO libraries (id, title, source_type, created_at, updated_at) VALUES ('/only/here', 'Only here', 'json', now()::text, now()::text)",
  );
  // An archive taken on SQLite restores into PostgreSQL too.
  const archive = (await s.services.backups.create('cli')).file;

  const node = poolOf(url, 'stacks');
  await node.query('SELECT 1');
  await assert.rejects(
    restoreArchiveToPostgres(archive, tempDir(), url),
    /Stacks is connected to .*replaced \(stacks from 127\.0\.0\.1 \(1 connection\)\): stop every node/,
  );
  assert.equal((await target.query("SELECT count(*)::int AS n FROM libraries WHERE id = '/only/here'")).rows[0]!.n, 1);
  await node.end();
  pools.splice(pools.indexOf(node), 1);

  await restoreArchiveToPostgres(archive, tempDir(), url);
  assert.equal((await target.query("SELECT count(*)::int AS n FROM libraries WHERE id = '/only/here'")).rows[0]!.n, 0);
  assert.deepEqual(await pgAnswer(target), await pgAnswer(source.pool));
});
