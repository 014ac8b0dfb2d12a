import path from 'node:path';
import { ApiError } from '../../lib/errors.ts';
import { indexColumns } from '../search/text.ts';
import { copySqliteToPg, StoreCopyError, type TableCopied } from '../store/copy.ts';
import { openDb } from '../store/db.ts';
import { holdsStacksDatabase } from '../store/index.ts';
import { openPgPool } from '../store/pg/pool.ts';
import { toSnippet, type Row } from '../store/snippets.ts';

export interface StoreCopyReport {
  /** The target, its password left out. */
  to: string;
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
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ApiError('validation_error', 'The target must be a postgres:// or postgresql:// URL.');
  if (!holdsStacksDatabase(dataDir)) throw new ApiError('validation_error', `${dataDir} holds no Stacks database (stacks.db): nothing to copy.`);
  const started = performance.now();
  const db = openDb(path.join(dataDir, 'stacks.db'));
  const pool = openPgPool(url, { max: 2, applicationName: 'stacks store copy' });
  try {
    const tables = await copySqliteToPg(db, pool, { ftsOf: (r) => indexColumns(toSnippet(r as unknown as Row)), progress });
    return { to: shownUrl(url), tables, rows: tables.reduce((n, t) => n + t.rows, 0), seconds: (performance.now() - started) / 1000 };
  } catch (err) {
    if (err instanceof StoreCopyError) throw new ApiError('conflict', err.message);
    throw err;
  } finally {
    db.close();
    await pool.end();
  }
}
