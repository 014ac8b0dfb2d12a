import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../../lib/thread-priority.ts';
import { MAIN_DB } from '../store/backup.ts';
import { copyPgToSqlite } from '../store/copy.ts';
import { openDb } from '../store/db.ts';
import { openPgPool } from '../store/pg/pool.ts';
import { copyOptions } from '../system/store-copy.ts';

/**
 * A worker thread that copies PostgreSQL into a backup's SQLite files (postgres.ts
 * postgresDatabases): the SQLite writes, the full-text rows and the checksums of every row are
 * synchronous work that would hold a node's request thread for seconds per 100,000 snippets. It has
 * its own two connections, named as a backup's, and runs at background priority.
 */
export interface PgSnapshotWorkerData {
  url: string;
  /** The folder the archive is prepared in: stacks.db and usage.db are made there. */
  dir: string;
  applicationName: string;
}

export type PgSnapshotWorkerMessage = { kind: 'done' } | { kind: 'failed'; error: string };

const data = workerData as PgSnapshotWorkerData;
lowerThreadPriority();
const pool = openPgPool(data.url, { max: 2, applicationName: data.applicationName });
try {
  // openDb makes both files, migrated to this Stacks' SQLite schema (usage.db beside stacks.db).
  const db = openDb(path.join(data.dir, MAIN_DB));
  try {
    await copyPgToSqlite(pool, db, copyOptions());
    // The archive takes the two files alone: nothing may stay in a write-ahead log beside them.
    db.pragma('journal_mode = DELETE');
    db.pragma('usage.journal_mode = DELETE');
  } finally {
    db.close();
  }
  parentPort!.postMessage({ kind: 'done' } satisfies PgSnapshotWorkerMessage);
} catch (err) {
  parentPort!.postMessage({ kind: 'failed', error: (err as Error).message } satisfies PgSnapshotWorkerMessage);
} finally {
  await pool.end();
}
