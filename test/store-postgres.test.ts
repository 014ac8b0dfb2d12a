// The PostgreSQL backend's schema and migrations (issue 39, under construction: the stores themselves
// still run on SQLite only) against real servers: Debian 12's PostgreSQL 15 and PostgreSQL 18 with pgvector.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../server/store/db.ts';
import { migratePg, PgVersionError } from '../server/store/pg/migrate.ts';
import { openPgPool, pgServerInfo, type PgPool } from '../server/store/pg/pool.ts';
import { pgMigrations } from '../server/store/pg/migrations/index.ts';
import { startPostgres, type PostgresFlavor, type TestPostgres } from './helpers/postgres.ts';

/** SQLite's tables and their columns after all its migrations (FTS5's own tables left out: PostgreSQL searches its own way). */
function sqliteColumns(): Map<string, string[]> {
  const db = openDb(':memory:');
  try {
    const out = new Map<string, string[]>();
    for (const schema of ['main', 'usage']) {
      const tables = db
        .prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'snippet_fts%' AND name NOT LIKE 'sqlite_%'`)
        .all() as { name: string }[];
      for (const { name } of tables) {
        out.set(name, (db.prepare(`SELECT name FROM pragma_table_info(?, ?)`).all(name, schema) as { name: string }[]).map((c) => c.name).sort());
      }
    }
    return out;
  } finally {
    db.close();
  }
}

/** What SQLite enforces with triggers and indexes, PostgreSQL enforces too. */
async function schemaRules(pool: PgPool): Promise<void> {
  const now = new Date().toISOString();
  const { rows } = await pool.query(
    "INSERT INTO teamspaces (name, plan, created_at) VALUES ('free-team', 'free', $1), ('payg-team', 'payg', $1) RETURNING name, included_requests",
    [now],
  );
  assert.deepEqual(rows, [
    { name: 'free-team', included_requests: 1000 },
    { name: 'payg-team', included_requests: 0 },
  ]);
  const {
    rows: [entry],
  } = await pool.query("INSERT INTO audit_log (at, last_at, actor_kind, action, outcome) VALUES ($1, $1, 'operator', 'key.create', 'ok') RETURNING id", [now]);
  assert.equal(typeof entry.id, 'number');
  await pool.query('UPDATE audit_log SET count = count + 1, last_at = $2 WHERE id = $1', [entry.id, now]);
  await assert.rejects(pool.query("UPDATE audit_log SET action = 'key.delete' WHERE id = $1", [entry.id]), /append-only/);
  await pool.query("INSERT INTO libraries (id, title, source_type, created_at, updated_at) VALUES ('/a/b', 'B', 'import', $1, $1)", [now]);
  await pool.query("INSERT INTO library_versions (library_id, state, is_current, created_at, updated_at) VALUES ('/a/b', 'ready', 1, $1, $1)", [now]);
  await assert.rejects(
    pool.query("INSERT INTO library_versions (library_id, state, is_current, created_at, updated_at) VALUES ('/a/b', 'ready', 1, $1, $1)", [now]),
    /library_versions_current/,
  );
}

for (const flavor of ['debian', 'pgvector'] as PostgresFlavor[]) {
  describe(`PostgreSQL schema (${flavor})`, () => {
    let server: TestPostgres;
    let pool: PgPool;
    before(async () => {
      server = await startPostgres(flavor);
      pool = openPgPool(server.url);
    });
    after(async () => {
      await pool?.end();
      await server?.close();
    });

    test('nodes starting together migrate once: the advisory lock serialises them', async () => {
      const pools = [openPgPool(server.url), openPgPool(server.url), openPgPool(server.url)];
      try {
        const results = await Promise.all(pools.map((p) => migratePg(p)));
        const applied = results.flatMap((r) => r.applied).sort((a, b) => a - b);
        assert.deepEqual(
          applied,
          pgMigrations.map((m) => m.version),
        );
        const { rows } = await pool.query('SELECT version FROM schema_migrations ORDER BY version');
        assert.deepEqual(
          rows.map((r) => r.version),
          pgMigrations.map((m) => m.version),
        );
        assert.deepEqual(await migratePg(pool), { applied: [] });
      } finally {
        await Promise.all(pools.map((p) => p.end()));
      }
    });

    test('every SQLite table has its PostgreSQL table with the same columns', async () => {
      const { rows } = await pool.query<{ table_name: string; column_name: string }>(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'",
      );
      const pgTables = new Map<string, string[]>();
      for (const r of rows) pgTables.set(r.table_name, [...(pgTables.get(r.table_name) ?? []), r.column_name]);
      const sqlite = sqliteColumns();
      assert.ok(sqlite.size > 30, `SQLite has ${sqlite.size} tables`);
      // In place of SQLite's search tables (FTS5's snippet_fts and its vocabulary, sqlite-vec's
      // snippet_vec made at run time), PostgreSQL has the row's tsvector, per-version word counts and
      // a plain table of the 8-bit vectors (migration 002).
      sqlite.set('snippets', [...sqlite.get('snippets')!, 'fts'].sort());
      sqlite.set('snippet_vocab', ['docs', 'term', 'version_id']);
      sqlite.set('snippet_vec', ['embedding', 'snippet_id', 'version_id']);
      for (const [table, columns] of sqlite) assert.deepEqual(pgTables.get(table)?.sort(), columns, `table ${table}`);
      // Tables only on PostgreSQL: the rate limit's buckets (migration 004; SQLite's one node keeps them
      // in memory) and jobs' staged inputs (migration 005; on SQLite the one node's disk holds them).
      assert.deepEqual([...pgTables.keys()].filter((t) => !sqlite.has(t)).sort(), ['rate_buckets', 'staged_file_chunks', 'staged_files']);
    });

    test("the schema's rules hold as in SQLite: plan defaults, the append-only audit log, one current version per tag", () => schemaRules(pool));

    test('a database migrated by a newer Stacks is refused, not written to', async () => {
      const url = await server.createDatabase('newer');
      const newer = openPgPool(url);
      try {
        await migratePg(newer);
        await newer.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', '2030-01-01')");
        await assert.rejects(migratePg(newer), (err: Error) => err instanceof PgVersionError && /newer Stacks \(migration 999\)/.test(err.message));
      } finally {
        await newer.end();
      }
    });

    test('the server reports its version, and whether pgvector can be used', async () => {
      const info = await pgServerInfo(pool);
      assert.ok(info.versionNum >= 150000);
      assert.equal(info.pgvectorAvailable, flavor === 'pgvector');
      if (flavor === 'pgvector') {
        await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
        const { rows } = await pool.query("SELECT '[1,2,3]'::vector <-> '[1,2,5]'::vector AS d");
        assert.equal(rows[0].d, 2);
      }
    });
  });
}
