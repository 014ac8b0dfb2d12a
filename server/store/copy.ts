import { createHash } from 'node:crypto';
import type { Db } from './db.ts';
import type { FtsColumns } from './pg/fts.ts';
import { tsvectorText } from './pg/fts.ts';
import { migratePg } from './pg/migrate.ts';
import type { PgPool } from './pg/pool.ts';
import { noNul } from './pg/text.ts';
import { withTransaction, type PgClient } from './pg/transaction.ts';
import { PgVectorStore } from './pg/vectors.ts';

/** One table copied: its rows, and the checksum of its rows read back from each side (equal when the copy is exact). */
export interface TableCopied {
  table: string;
  rows: number;
  source: string;
  target: string;
}

/** A stored snippet's row as the table holds it (the columns the full-text row is made of). */
export type SnippetTableRow = Record<string, unknown> & { id: number; version_id: number; kind: string };

export interface CopyOptions {
  /** The full-text columns of a snippet of a version that has them (documentation, not a source partition): the writer's own (ingest). */
  ftsOf(row: SnippetTableRow): FtsColumns;
  /** Told when a table starts and ends (the CLI's progress). */
  progress?(table: string, rows: number): void;
}

export interface CopyToPgOptions extends CopyOptions {
  /**
   * Empty the target first, in the copy's transaction, instead of refusing one that holds data (a
   * restore: a copy that fails leaves the database as it was).
   */
  replace?: boolean;
}

/** Not copied: each backend keeps its own migrations, and searches its own way (FTS5 and vec0 there; tsvector, snippet_vocab and snippet_vec here). */
const SKIPPED = /^(schema_migrations$|snippet_fts|snippet_vec|sqlite_)/;
/** Rows per INSERT: under PostgreSQL's 65,535 parameters for the widest table, and small enough for snippets' texts. */
const BATCH = 500;
/** Rows per page when a table is read back for its checksum. */
const PAGE = 5000;

interface TableInfo {
  name: string;
  schema: 'main' | 'usage';
  columns: string[];
  key: string[];
  parents: string[];
}

/**
 * Copies a SQLite data dir's database (`db`, a connection that is not shared meanwhile) into an
 * empty PostgreSQL database, migrated first: every table's rows with their ids, in an order their
 * foreign keys allow, then what PostgreSQL searches with (each documentation snippet's tsvector;
 * snippet_vocab by its triggers; the 8-bit vectors, and with pgvector their HNSW column), and the
 * identity sequences moved past the copied ids. Each table is then read back from both sides in
 * key order and checksummed. All in one PostgreSQL transaction, from one SQLite read snapshot: a
 * copy that fails, or whose checksums differ, leaves the target empty (StoreCopyError says why), or
 * with `replace` (a restore: the target emptied first, in the same transaction) as it was.
 */
export async function copySqliteToPg(db: Db, pool: PgPool, options: CopyToPgOptions): Promise<TableCopied[]> {
  await migratePg(pool);
  const tables = orderByParents(sqliteTables(db));
  db.exec('BEGIN');
  try {
    return await withTransaction(pool, async (c) => {
      if (options.replace) await emptyDatabase(c, pool);
      else await refuseNonEmpty(c, tables);
      const docsVersions = new Set((db.prepare("SELECT id FROM library_versions WHERE kind = 'docs'").pluck().all() as number[]).map(Number));
      for (const t of tables) {
        options.progress?.(t.name, 0);
        const rows = await copyTable(db, c, t, t.name === 'snippets' ? (r) => (docsVersions.has(r.version_id) ? tsvectorText(options.ftsOf(r)) : null) : null);
        options.progress?.(t.name, rows);
      }
      await copyVectors(db, c);
      for (const t of tables) if (t.key.length === 1 && t.key[0] === 'id') await moveIdentity(c, t.name);
      // The pgvector column (when the server has the extension) follows the embedder recorded in meta, filled from the copied bytes.
      const vectors = vectorTable(db.prepare("SELECT value FROM meta WHERE key = 'embedder'").pluck().get() as string | undefined);
      if (vectors) await new PgVectorStore(pool).ensure(vectors.embedderId, vectors.dims);
      // Read back inside the transaction: a copy whose rows differ is rolled back, and the target stays empty.
      return checked(db, c, tables, 'SQLite', 'PostgreSQL');
    });
  } finally {
    db.exec('COMMIT');
  }
}

/**
 * The way back: a PostgreSQL database copied into a new SQLite database (`db`, just created and
 * migrated by openDb, not shared meanwhile): every table SQLite has, from one REPEATABLE READ
 * snapshot of PostgreSQL, then SQLite's own search side built from the copy (FTS5 rows of the
 * documentation snippets, the sqlite-vec table of the 8-bit vectors), each table checked by checksum
 * as copySqliteToPg does. One SQLite transaction: a copy that fails or differs writes nothing.
 */
export async function copyPgToSqlite(pool: PgPool, db: Db, options: CopyOptions): Promise<TableCopied[]> {
  // Brought to this version's schema first, as a node starting on it would (one of a newer Stacks is refused).
  await migratePg(pool);
  const tables = orderByParents(sqliteTables(db));
  return withTransaction(pool, async (c) => {
    await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const vectors = vectorTable((await c.query<{ value: string }>("SELECT value FROM meta WHERE key = 'embedder'")).rows[0]?.value);
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const t of tables)
        if (db.prepare(`SELECT 1 FROM ${t.schema}.${ident(t.name)} LIMIT 1`).get())
          throw new StoreCopyError(`The target data dir already holds data (table ${t.name}).`);
      if (vectors) db.exec(`CREATE VIRTUAL TABLE snippet_vec USING vec0(version_id integer partition key, embedding int8[${vectors.dims}] distance_metric=l2)`);
      for (const t of tables) {
        options.progress?.(t.name, 0);
        const insert = db.prepare(
          `INSERT INTO ${t.schema}.${ident(t.name)} (${t.columns.map(ident).join(', ')}) VALUES (${t.columns.map(() => '?').join(', ')})`,
        );
        let rows = 0;
        await pgPages(c, t, (row) => {
          insert.run(...t.columns.map((col) => sqliteValue(row[col])));
          rows++;
        });
        options.progress?.(t.name, rows);
      }
      const docs = new Set(db.prepare("SELECT id FROM library_versions WHERE kind = 'docs'").pluck().all() as number[]);
      const fts = db.prepare('INSERT INTO snippet_fts (rowid, scope, title, breadcrumb, description, code, content) VALUES (?, ?, ?, ?, ?, ?, ?)');
      // In pages: better-sqlite3 runs no other statement on a connection while one is being iterated.
      const page = db.prepare('SELECT * FROM snippets WHERE id > ? ORDER BY id LIMIT 1000');
      for (let rows = page.all(0) as SnippetTableRow[]; rows.length > 0; rows = page.all(rows[rows.length - 1]!.id) as SnippetTableRow[]) {
        for (const r of rows) {
          if (!docs.has(r.version_id)) continue;
          const f = options.ftsOf(r);
          fts.run(r.id, `v${r.version_id}`, f.title, f.breadcrumb, f.description, f.code, f.content);
        }
      }
      if (vectors) {
        const vec = db.prepare('INSERT INTO snippet_vec (rowid, version_id, embedding) VALUES (?, ?, vec_int8(?))');
        const vecTable: TableInfo = {
          name: 'snippet_vec',
          schema: 'main',
          columns: ['snippet_id', 'version_id', 'embedding'],
          key: ['snippet_id'],
          parents: [],
        };
        await pgPages(c, vecTable, (r) => void vec.run(BigInt(r.snippet_id as number), BigInt(r.version_id as number), r.embedding as Buffer));
      }
      const out = await checked(db, c, tables, 'PostgreSQL', 'SQLite');
      db.exec('COMMIT');
      return out;
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  });
}

/** A value as SQLite stores it (PostgreSQL's answers: numbers, text, bytes, null). */
function sqliteValue(v: unknown): unknown {
  return typeof v === 'boolean' ? (v ? 1 : 0) : (v ?? null);
}

/** The vector table meta's `embedder` value names (VectorStore.ensure writes `<embedder id>:<dims>:int8`), or null for none. */
function vectorTable(stamp: string | null | undefined): { embedderId: string; dims: number } | null {
  const m = stamp ? /^(.*):(\d+):int8$/.exec(stamp) : null;
  return m ? { embedderId: m[1]!, dims: Number(m[2]) } : null;
}

/** Each table's rows read back from both sides in key order and checksummed; StoreCopyError when any differ (the caller's transaction then rolls back). */
async function checked(db: Db, c: PgClient, tables: TableInfo[], from: 'SQLite' | 'PostgreSQL', to: 'SQLite' | 'PostgreSQL'): Promise<TableCopied[]> {
  const out: TableCopied[] = [];
  for (const t of tables) {
    const lite = sqliteChecksum(db, t);
    const pg = await pgChecksum(c, t);
    const [source, target] = from === 'SQLite' ? [lite, pg] : [pg, lite];
    out.push({ table: t.name, rows: lite.rows, source: source.sum, target: target.sum });
  }
  const differ = out.filter((t) => t.source !== t.target);
  if (differ.length > 0)
    throw new StoreCopyError(`The copy was checked and rolled back: the rows of ${differ.map((t) => t.table).join(', ')} differ between ${from} and ${to}.`);
  return out;
}

function sqliteTables(db: Db): TableInfo[] {
  const out: TableInfo[] = [];
  for (const schema of ['main', 'usage'] as const) {
    const attached = (db.prepare('SELECT name FROM pragma_database_list').pluck().all() as string[]).includes(schema);
    if (!attached) continue;
    const names = db.prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[];
    for (const name of names.filter((n) => !SKIPPED.test(n))) {
      const cols = db.prepare('SELECT name, pk FROM pragma_table_info(?, ?) ORDER BY cid').all(name, schema) as { name: string; pk: number }[];
      const key = cols
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      const parents = db.prepare('SELECT DISTINCT "table" FROM pragma_foreign_key_list(?, ?)').pluck().all(name, schema) as string[];
      out.push({ name, schema, columns: cols.map((c) => c.name), key: key.length > 0 ? key : cols.map((c) => c.name), parents });
    }
  }
  return out;
}

/** Parents before children (a table referring to itself is its own parent: its rows go in id order). */
function orderByParents(tables: TableInfo[]): TableInfo[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const out: TableInfo[] = [];
  const seen = new Set<string>();
  const visit = (t: TableInfo) => {
    if (seen.has(t.name)) return;
    seen.add(t.name);
    for (const p of t.parents) if (p !== t.name && byName.has(p)) visit(byName.get(p)!);
    out.push(t);
  };
  tables.forEach(visit);
  return out;
}

async function refuseNonEmpty(c: PgClient, tables: TableInfo[]): Promise<void> {
  for (const t of tables) {
    if ((await c.query(`SELECT 1 FROM ${ident(t.name)} LIMIT 1`)).rowCount)
      throw new StoreCopyError(`The target database already holds data (table ${t.name}): copy into an empty database.`);
  }
}

/**
 * Every table of the database emptied (migrations kept), its identities restarted, and the pgvector
 * column dropped (the copied vectors may have another dimension; ensure() adds it again after the
 * copy): the state of a database just migrated, inside the caller's transaction.
 */
async function emptyDatabase(c: PgClient, pool: PgPool): Promise<void> {
  const { rows } = await c.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY tablename",
  );
  await new PgVectorStore(pool).dropKnn();
  if (rows.length) await c.query(`TRUNCATE ${rows.map((r) => ident(r.name)).join(', ')} RESTART IDENTITY CASCADE`);
}

/** A copy that cannot go ahead, or whose check failed: the message says why. */
export class StoreCopyError extends Error {
  override name = 'StoreCopyError';
}

async function copyTable(db: Db, c: PgClient, t: TableInfo, fts: ((r: SnippetTableRow) => string | null) | null): Promise<number> {
  const columns = fts ? [...t.columns, 'fts'] : t.columns;
  const insert = (n: number) =>
    `INSERT INTO ${ident(t.name)} (${columns.map(ident).join(', ')}) OVERRIDING SYSTEM VALUE VALUES ${Array.from(
      { length: n },
      (_, r) => `(${columns.map((col, i) => `$${r * columns.length + i + 1}${col === 'fts' ? '::tsvector' : ''}`).join(', ')})`,
    ).join(', ')}`;
  const order = t.key.map((k) => `"${k}"`).join(', ');
  let batch: unknown[][] = [];
  let rows = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await c.query(insert(batch.length), batch.flat());
    rows += batch.length;
    batch = [];
  };
  for (const row of db.prepare(`SELECT * FROM ${t.schema}.${ident(t.name)} ORDER BY ${order}`).iterate() as Iterable<Record<string, unknown>>) {
    const values = t.columns.map((col) => pgValue(row[col]));
    if (fts) values.push(fts(row as SnippetTableRow));
    batch.push(values);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  return rows;
}

/** The 8-bit vectors from sqlite-vec's table (when the instance has one) into snippet_vec. */
async function copyVectors(db: Db, c: PgClient): Promise<void> {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'snippet_vec'").get()) return;
  const select = db.prepare('SELECT rowid AS id, version_id, embedding FROM snippet_vec');
  let batch: { id: number; version: number; bytes: Buffer }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await c.query('INSERT INTO snippet_vec (snippet_id, version_id, embedding) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[])', [
      batch.map((b) => b.id),
      batch.map((b) => b.version),
      batch.map((b) => b.bytes),
    ]);
    batch = [];
  };
  for (const r of select.iterate() as Iterable<{ id: number | bigint; version_id: number | bigint; embedding: Buffer }>)
    if ((batch.push({ id: Number(r.id), version: Number(r.version_id), bytes: Buffer.from(r.embedding) }), batch.length >= 1000)) await flush();
  await flush();
}

async function moveIdentity(c: PgClient, table: string): Promise<void> {
  const seq = (await c.query<{ s: string | null }>('SELECT pg_get_serial_sequence($1, $2) AS s', [table, 'id'])).rows[0]?.s;
  if (!seq) return;
  await c.query(`SELECT setval($1, coalesce((SELECT max(id) FROM ${ident(table)}), 0) + 1, false)`, [seq]);
}

/** A value as PostgreSQL stores it: text without NUL (pg/text.ts), integers as numbers. */
function pgValue(v: unknown): unknown {
  if (typeof v === 'string') return noNul(v);
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/** The checksum of a table's rows in key order: each row's values as JSON (bytes as hex), text without NUL as PostgreSQL keeps it. */
function rowsHash(): { add(row: Record<string, unknown>, columns: string[]): void; done(): { rows: number; sum: string } } {
  const h = createHash('sha256');
  let rows = 0;
  return {
    add(row, columns) {
      rows++;
      h.update(JSON.stringify(columns.map((c) => normalise(row[c]))));
      h.update('\n');
    },
    done: () => ({ rows, sum: h.digest('hex') }),
  };
}

function normalise(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return `x${v.toString('hex')}`;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') return noNul(v);
  return v ?? null;
}

function sqliteChecksum(db: Db, t: TableInfo): { rows: number; sum: string } {
  const h = rowsHash();
  const sql = `SELECT ${t.columns.map(ident).join(', ')} FROM ${t.schema}.${ident(t.name)} ORDER BY ${t.key.map(ident).join(', ')}`;
  for (const row of db.prepare(sql).iterate() as Iterable<Record<string, unknown>>) h.add(row, t.columns);
  return h.done();
}

async function pgChecksum(c: PgClient, t: TableInfo): Promise<{ rows: number; sum: string }> {
  const h = rowsHash();
  await pgPages(c, t, (row) => h.add(row, t.columns));
  return h.done();
}

/** Every row of a PostgreSQL table in key order, read in pages by key (a million snippets do not fit in memory at once). */
async function pgPages(c: PgClient, t: TableInfo, each: (row: Record<string, unknown>) => void): Promise<void> {
  const types = new Map(
    (
      await c.query<{ column_name: string; data_type: string }>(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1",
        [t.name],
      )
    ).rows.map((r) => [r.column_name, r.data_type]),
  );
  // Text keys compare by code point, as SQLite's BINARY collation does, so both sides list the rows alike.
  const keys = t.key.map((k) => (types.get(k) === 'text' ? `${ident(k)} COLLATE "C"` : ident(k)));
  const select = `SELECT ${t.columns.map(ident).join(', ')} FROM ${ident(t.name)}`;
  let last: unknown[] | null = null;
  for (;;) {
    const after: string = last ? `WHERE (${keys.join(', ')}) > (${keys.map((_, i) => `$${i + 1}`).join(', ')})` : '';
    const rows: Record<string, unknown>[] = (await c.query<Record<string, unknown>>(`${select} ${after} ORDER BY ${keys.join(', ')} LIMIT ${PAGE}`, last ?? []))
      .rows;
    rows.forEach(each);
    if (rows.length < PAGE) return;
    const end: Record<string, unknown> = rows[rows.length - 1]!;
    last = t.key.map((k): unknown => end[k]);
  }
}

/** A table or column name as an identifier (the names come from SQLite's own catalogue). */
function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
