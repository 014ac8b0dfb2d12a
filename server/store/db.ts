import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openSqlite } from '../../lib/sqlite.ts';
import * as sqliteVec from 'sqlite-vec';
import { migrations } from './migrations/index.ts';
import { attachUsageDb, usageDbFile } from './usage-db.ts';

export type Db = Database.Database;
export type Statement = Database.Statement<unknown[], unknown>;

/** A prepare() that prepares each SQL text once: stores on a request's path reuse their statements. */
export function statementCache(db: Db): (sql: string) => Statement {
  const cache = new Map<string, Statement>();
  return (sql) => {
    let st = cache.get(sql);
    if (!st) cache.set(sql, (st = db.prepare(sql)));
    return st;
  };
}

export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

/**
 * Opens (or creates) the SQLite file: WAL, foreign keys, a busy timeout so that the
 * CLI and a running server can share the file, sqlite-vec loaded and checked, migrations applied.
 */
export function openDb(file: string, options: { readonly?: boolean } = {}): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = openSqlite(file, { readonly: options.readonly ?? false });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  db.pragma('temp_store = MEMORY');
  // Mapped reads are faster than read() but count as resident memory: 256 MB keeps the hot part of
  // the index mapped for the read-write connection. The read-only connections of the retrieval
  // workers read through the OS page cache with a smaller page cache of their own: their reads are
  // spread over the whole file, and mapped they added up to 750 MB of resident memory on the 1M
  // bench corpus for about 5% more throughput.
  db.pragma(options.readonly ? 'cache_size = -16384' : 'cache_size = -65536');
  db.pragma(options.readonly ? 'mmap_size = 0' : 'mmap_size = 268435456');
  loadVec(db);
  if (!options.readonly) {
    migrate(db);
    attachUsageDb(db, usageDbFile(file));
  }
  return db;
}

function loadVec(db: Db): void {
  try {
    sqliteVec.load(db);
    const row = db.prepare('SELECT vec_version() AS v').get() as { v: string };
    if (!row.v) throw new Error('vec_version() returned nothing');
  } catch (err) {
    throw new StoreOpenError(
      `Could not load the sqlite-vec extension (${(err as Error).message}). ` +
        'Reinstall dependencies with `npm install` on this machine (the package sqlite-vec-linux-x64 or -arm64 must match the CPU).',
    );
  }
}

/** Applies numbered migrations in order, each in its own transaction, recorded in schema_migrations. */
export function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      m.up(db);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    })();
  }
}
