import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../lib/errors.ts';
import { MAIN_DB } from '../store/backup.ts';
import { copySqliteToPg } from '../store/copy.ts';
import { openDb } from '../store/db.ts';
import { connectedNodes } from '../store/pg/activity.ts';
import { openPgPool, type PgPool } from '../store/pg/pool.ts';
import { PgStagedFileStore } from '../store/pg/staged-files.ts';
import { storeStagedInputs } from './data-files.ts';
import { copyOptions, shownUrl } from '../system/store-copy.ts';
import { DATA_NAMES, ensureDir, moveAside, putBack, refuseServing, restored, verified, type RestoreResult } from './restore.ts';
import type { DatabaseSnapshot } from './service.ts';
import type { PgSnapshotWorkerData, PgSnapshotWorkerMessage } from './pg-snapshot-worker.ts';

/**
 * Backups and restores of an instance whose state is in PostgreSQL (STACKS_DATABASE_URL). The
 * archive keeps its format: its stacks.db and usage.db are SQLite files, made by copying PostgreSQL
 * into them from one REPEATABLE READ snapshot, table by table checked by checksum
 * (server/store/copy.ts). So one archive restores into either backend: into a data dir as any
 * archive (restore.ts), or into PostgreSQL by copying those files into it (restoreArchiveToPostgres).
 */

/** The application name of a restore's connections: the one Stacks connection a restore does not count as a running node. */
const RESTORE_APPLICATION = 'stacks restore';
/** A backup's: a restore is refused while one copies. */
const BACKUP_APPLICATION = 'stacks backup';

/** The worker's entry: the tsx shim beside the TypeScript source, or the compiled module in dist/. */
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './pg-snapshot-worker.mjs' : './pg-snapshot-worker.js', import.meta.url);

/**
 * The archive's databases copied out of PostgreSQL (`url`, the node's STACKS_DATABASE_URL) in a
 * worker thread of their own (pg-snapshot-worker.ts), so a node keeps serving while it backs up.
 */
export function postgresDatabases(url: string): DatabaseSnapshot {
  return (dir) =>
    new Promise<void>((resolve, reject) => {
      const data: PgSnapshotWorkerData = { url, dir, applicationName: BACKUP_APPLICATION };
      const worker = new Worker(WORKER_ENTRY, { workerData: data });
      let settled = false;
      const finish = (err: Error | null) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve();
      };
      worker.on('message', (m: PgSnapshotWorkerMessage) => finish(m.kind === 'done' ? null : new Error(m.error)));
      worker.on('error', finish);
      worker.on('exit', (code) => finish(code === 0 ? null : new Error(`the backup's copy thread exited with code ${code}`)));
    });
}

/**
 * Replaces the PostgreSQL database's data with an archive's (taken on either backend) and the data
 * dir's own files (license, sources.yaml, session secret, staged inputs) with the archive's. Refused
 * while a Stacks process is connected to the database (a node, a CLI command: any connection
 * whose application name is Stacks'), while a server serves the data dir, for a damaged archive and
 * for one of a newer schema. The archive's SQLite files are migrated to this Stacks' schema first,
 * then copied in one transaction that empties the database first: a restore that fails or whose
 * checksums differ leaves the database as it was (and puts the data dir's files back). The data
 * dir's previous files are moved to `pre-restore-<time>/`; PostgreSQL's previous rows are gone
 * (take a backup first, or rely on the server's own backups).
 */
export async function restoreArchiveToPostgres(archive: string, dataDir: string, url: string, now = new Date()): Promise<RestoreResult> {
  refuseServing(dataDir);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const work = path.join(ensureDir(dataDir), `.restore-${stamp}`);
  const pool = openPgPool(url, { max: 2, applicationName: RESTORE_APPLICATION });
  try {
    const manifest = await verified(archive, work);
    const nodes = await connectedNodes(pool, RESTORE_APPLICATION);
    if (nodes.length > 0)
      throw new ApiError(
        'conflict',
        `Stacks is connected to ${shownUrl(url)} (${nodes.join(', ')}): stop every node and command using this database before restoring.`,
      );
    // Migrated here, as a data dir is when next opened: an archive of an older schema becomes this Stacks' tables.
    const db = openDb(path.join(work, MAIN_DB));
    try {
      const movedAside = moveAside(dataDir, path.join(dataDir, `pre-restore-${stamp}`), DATA_NAMES);
      const movedIn = moveFilesIn(work, dataDir);
      try {
        await copySqliteToPg(db, pool, { ...copyOptions(), replace: true });
      } catch (err) {
        for (const name of movedIn) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
        if (movedAside) putBack(dataDir, movedAside);
        throw err;
      }
      await shareStagedInputs(dataDir, pool);
      return restored(archive, manifest, movedAside);
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    await pool.end();
  }
}

/** The archive's staged inputs, now in the data dir, stored in the database as well (storeStagedInputs). */
async function shareStagedInputs(dataDir: string, pool: PgPool): Promise<void> {
  try {
    await storeStagedInputs(dataDir, new PgStagedFileStore(pool));
  } catch (err) {
    throw new Error(
      `The database and the data dir were restored, but the staged inputs of the pending jobs could not be stored in the database: ${(err as Error).message}. Run the restore again.`,
    );
  }
}

/** The archive's data files (its `files/` entries) moved into the data dir; their names. */
function moveFilesIn(work: string, dataDir: string): string[] {
  const files = path.join(work, 'files');
  if (!fs.existsSync(files)) return [];
  const names = fs.readdirSync(files);
  for (const name of names) fs.renameSync(path.join(files, name), path.join(dataDir, name));
  return names;
}
