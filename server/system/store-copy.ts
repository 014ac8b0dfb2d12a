import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../lib/errors.ts';
import { indexColumns } from '../search/text.ts';
import { copyPgToSqlite, copySqliteToPg, StoreCopyError, type CopyOptions, type TableCopied } from '../store/copy.ts';
import { openDb } from '../store/db.ts';
import { holdsStacksDatabase } from '../store/index.ts';
import { openPgPool } from '../store/pg/pool.ts';
import { PgStagedFileStore } from '../store/pg/staged-files.ts';
import { storeStagedInputs } from '../backup/data-files.ts';
import { toSnippet, type Row } from '../store/snippets.ts';

export interface StoreCopyReport {
  /** The PostgreSQL side (target of --to, source of --from), its password left out. */
  postgres: string;
  direction: 'to-postgres' | 'from-postgres';
  tables: TableCopied[];
  rows: number;
  seconds: number;
}

/** A PostgreSQL URL as it may be shown and logged: without its password. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/**
 * `stacks store copy --to postgres://...`: a data dir's SQLite database copied into an empty
 * PostgreSQL database and checked table by table (server/store/copy.ts). Like a restore, it works on
 * the files before any service opens them; the SQLite side is only read (one snapshot), so it may
 * run beside a server, and what that server writes after the snapshot is not copied.
 */
export async function copyStoreToPostgres(dataDir: string, url: string, progress?: (table: string, rows: number) => void): Promise<StoreCopyReport> {
  requirePostgresUrl(url, 'target');
  if (!holdsStacksDatabase(dataDir)) throw new ApiError('validation_error', `${dataDir} holds no Stacks database (stacks.db): nothing to copy.`);
  const started = performance.now();
  const db = openDb(path.join(dataDir, 'stacks.db'));
  const pool = openPgPool(url, { max: 2, applicationName: 'stacks store copy' });
  try {
    const tables = await copySqliteToPg(db, pool, copyOptions(progress));
    // The pending jobs' inputs too: on PostgreSQL any node may run them (StagedFiles).
    await storeStagedInputs(dataDir, new PgStagedFileStore(pool));
    return report(url, 'to-postgres', tables, started);
  } catch (err) {
    throw asApiError(err);
  } finally {
    db.close();
    await pool.end();
  }
}

/**
 * `stacks store copy --from postgres://... --data-dir NEW`: the way back, into a data dir that holds
 * no Stacks database yet (the copy makes it); the PostgreSQL database is read in one snapshot (and
 * migrated first, as a node starting on it would). A failed copy leaves no database behind.
 */
export async function copyStoreFromPostgres(url: string, dataDir: string, progress?: (table: string, rows: number) => void): Promise<StoreCopyReport> {
  requirePostgresUrl(url, 'source');
  const file = path.join(dataDir, 'stacks.db');
  if (fs.existsSync(file)) throw new ApiError('conflict', `${dataDir} already holds a Stacks database: copy into a new data dir.`);
  const started = performance.now();
  const pool = openPgPool(url, { max: 2, applicationName: 'stacks store copy' });
  try {
    const db = openDb(file);
    try {
      return report(url, 'from-postgres', await copyPgToSqlite(pool, db, copyOptions(progress)), started);
    } finally {
      db.close();
    }
  } catch (err) {
    // The database files are this copy's own (none was there): nothing half-made stays.
    for (const name of fs.readdirSync(dataDir))
      if (/^(stacks|usage)\.db(-wal|-shm|-journal)?$/.test(name)) fs.rmSync(path.join(dataDir, name), { force: true });
    throw asApiError(err);
  } finally {
    await pool.end();
  }
}

function requirePostgresUrl(url: string, role: 'source' | 'target'): void {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ApiError('validation_error', `The ${role} must be a postgres:// or postgresql:// URL.`);
}

/** A copy refused or failing its check is a conflict with what the databases hold; anything else goes on as it is. */
function asApiError(err: unknown): unknown {
  return err instanceof StoreCopyError ? new ApiError('conflict', err.message) : err;
}

/** The writer's full-text columns of a stored snippet (what FTS5 and tsvector index alike): what every copy between the backends builds its search side with (also backups on PostgreSQL). */
export function copyOptions(progress?: (table: string, rows: number) => void): CopyOptions {
  return { ftsOf: (r) => indexColumns(toSnippet(r as unknown as Row)), progress };
}

function report(url: string, direction: StoreCopyReport['direction'], tables: TableCopied[], started: number): StoreCopyReport {
  return { postgres: shownUrl(url), direction, tables, rows: tables.reduce((n, t) => n + t.rows, 0), seconds: (performance.now() - started) / 1000 };
}
