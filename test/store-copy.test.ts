// `stacks store copy --to postgres://...`: a data dir with a real library (its snippets, term index
// and vectors), accounts, usage and audit copied into PostgreSQL with pgvector, checked table by table,
// and usable there; refused into a database that holds data, and without losing the password to the output.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli } from './helpers/cli.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import { startTestServer, tempDir } from './helpers/server.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import { PgSearchProbeStore } from '../server/store/pg/search-probe.ts';
import { PgLibraryStore } from '../server/store/pg/libraries.ts';
import type { StoreCopyReport } from '../server/system/store-copy.ts';

let server: TestPostgres;
let dataDir: string;
const pools: PgPool[] = [];

before(async () => {
  server = await startPostgres('pgvector');
  const s = await startTestServer();
  try {
    await loadSearchCorpus(s.services, ['pino']);
    // usage and audit rows: a metered question, a refused key
    assert.equal((await s.api('/api/v2/context?libraryId=/pinojs/pino&query=child+logger&type=json')).status, 200);
    assert.equal((await s.api('/api/v2/context?libraryId=/pinojs/pino&query=x', { auth: 'stk_not-a-key' })).status, 401);
  } finally {
    await s.close();
  }
  dataDir = s.dataDir;
});

after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.close();
});

test('a data dir is copied into PostgreSQL, every table checked, and PostgreSQL answers from the copy', async () => {
  const url = (await server.createDatabase('copy')).replace('stacks@', 'stacks:s3cret-pw@');
  const r = await runCli(['store', 'copy', '--to', url, '--data-dir', dataDir, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes('s3cret-pw') && !r.stderr.includes('s3cret-pw'), 'the password is never shown');
  const report = JSON.parse(r.stdout) as StoreCopyReport;
  const rows = new Map(report.tables.map((t) => [t.table, t.rows]));
  assert.ok(report.tables.every((t) => t.source === t.target));
  for (const table of ['libraries', 'library_versions', 'snippets', 'term_chunks', 'term_postings', 'teamspaces', 'api_keys', 'audit_log', 'usage_daily'])
    assert.ok((rows.get(table) ?? 0) > 0, `${table} copied: ${rows.get(table)}`);
  const pool = openPgPool(url, { max: 2 });
  pools.push(pool);
  // the search side PostgreSQL builds for itself: full-text rows, per-version word counts, vectors with their pgvector column
  const { rows: counts } = await pool.query(
    `SELECT (SELECT count(*) FROM snippets WHERE fts IS NOT NULL) AS fts, (SELECT count(*) FROM snippet_vocab) AS vocab,
            (SELECT count(*) FROM snippet_vec) AS vec, (SELECT count(*) FROM snippet_vec WHERE knn IS NOT NULL) AS knn`,
  );
  assert.equal(Number(counts[0].fts), rows.get('snippets'));
  assert.ok(Number(counts[0].vocab) > 0);
  assert.equal(Number(counts[0].vec), rows.get('snippets'));
  assert.equal(Number(counts[0].knn), rows.get('snippets'));
  const [top] = await new PgSearchProbeStore(pool).topVersions('child AND logger', 3, 3);
  const { rows: versions } = await pool.query<{ id: number; library_id: string }>('SELECT id, library_id FROM library_versions WHERE is_current = 1');
  assert.equal(versions.find((v) => v.id === top?.versionId)?.library_id, '/pinojs/pino');

  // and back into a new data dir: the same rows, and a server there answers as the original did
  const back = tempDir();
  const home = await runCli(['store', 'copy', '--from', url, '--data-dir', back, '--json']);
  assert.equal(home.code, 0, home.stderr);
  const returned = new Map((JSON.parse(home.stdout) as StoreCopyReport).tables.map((t) => [t.table, t.target]));
  for (const t of report.tables) assert.equal(returned.get(t.table), t.source, `${t.table} came back as it left`);
  const question = '/api/v2/context?libraryId=/pinojs/pino&query=redact+secrets+from+logs&type=json';
  const answers: unknown[] = [];
  for (const dir of [dataDir, back]) {
    const s = await startTestServer({ dataDir: dir });
    try {
      // a library's answer (its term index and vectors), and one naming no library (the FTS5 probes choose it)
      for (const q of [question, '/api/v3/search?query=redact+secrets+from+pino+logs&type=json']) {
        const res = await s.api(q, { auth: null });
        assert.equal(res.status, 200);
        answers.push(await res.json());
      }
    } finally {
      await s.close();
    }
  }
  assert.deepEqual(answers.slice(2), answers.slice(0, 2));
  assert.match(JSON.stringify(answers[3]), /pino/);
  assert.equal((await runCli(['store', 'copy', '--from', url, '--data-dir', back])).code, 2, 'not into a data dir that holds a database');

  // new rows get ids past the copied ones
  const next = await new PgLibraryStore(pool).createVersion('/pinojs/pino', 'v-next', null, new Date().toISOString());
  assert.ok(next > Math.max(...versions.map((v) => v.id)));

  // into a database that holds data: refused, nothing written
  const again = await runCli(['store', 'copy', '--to', url, '--data-dir', dataDir]);
  assert.equal(again.code, 2, again.stderr);
  assert.match(again.stderr, /already holds data \(table \w+\): copy into an empty database/);
  assert.equal(Number((await pool.query('SELECT count(*) AS n FROM snippets')).rows[0].n), rows.get('snippets'));
});

test('store copy refuses what is not a PostgreSQL URL or not a data dir', async () => {
  const bad = await runCli(['store', 'copy', '--to', 'mysql://x', '--data-dir', dataDir]);
  assert.match(bad.stderr, /postgres:\/\/ or postgresql:\/\/ URL/);
  const none = await runCli(['store', 'copy', '--to', server.url, '--data-dir', `${dataDir}/nope`]);
  assert.match(none.stderr, /holds no Stacks database/);
  assert.ok(bad.code !== 0 && none.code !== 0);
});
