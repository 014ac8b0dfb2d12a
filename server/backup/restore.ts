import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../lib/errors.ts';
import { MAIN_DB, SCHEMA_VERSION, schemaVersionOfFile } from '../store/backup.ts';
import { runningServer } from '../system/pid-file.ts';
import { unpackArchive, type Manifest } from './archive.ts';
import { DATA_FILES, DATA_TREES, DATABASE_FILES } from './data-files.ts';

export interface RestoreResult {
  archive: string;
  createdAt: string;
  schemaVersion: number;
  libraries: number;
  snippets: number;
  /** Where the data dir's previous files were moved (never deleted); null when it held none. */
  movedAside: string | null;
}

/** Checks an archive without changing anything: unpacked into a temporary folder, verified, removed. */
export async function inspectArchive(archive: string, dataDir: string): Promise<Manifest> {
  const work = fs.mkdtempSync(path.join(ensureDir(dataDir), '.inspect-'));
  try {
    return await verified(archive, work);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Replaces the data dir's databases and files with an archive's. Refused while a server serves
 * the data dir, for a damaged archive (checksums) and for one taken by a newer Stacks (its schema
 * is unknown here). What the data dir held is moved to `pre-restore-<time>/` beside the data, never
 * deleted. An archive of an older schema is migrated when the data dir is next opened.
 */
export async function restoreArchive(archive: string, dataDir: string, now = new Date()): Promise<RestoreResult> {
  refuseServing(dataDir);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const work = path.join(ensureDir(dataDir), `.restore-${stamp}`);
  try {
    const manifest = await verified(archive, work);
    const movedAside = moveAside(dataDir, path.join(dataDir, `pre-restore-${stamp}`), [...DATABASE_FILES, ...DATA_NAMES]);
    try {
      for (const name of ['stacks.db', 'usage.db']) fs.renameSync(path.join(work, name), path.join(dataDir, name));
      const files = path.join(work, 'files');
      if (fs.existsSync(files)) for (const entry of fs.readdirSync(files)) fs.renameSync(path.join(files, entry), path.join(dataDir, entry));
    } catch (err) {
      // Half moved in: the archive's files go, the data dir's come back.
      if (movedAside) putBack(dataDir, movedAside);
      throw err;
    }
    return restored(archive, manifest, movedAside);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Refused while a server serves the data dir (its pid file names a live process). */
export function refuseServing(dataDir: string): void {
  const pid = runningServer(dataDir);
  if (pid !== null)
    throw new ApiError(
      'conflict',
      `A Stacks server (pid ${pid}) is serving ${dataDir}: stop it before restoring (or remove a stale ${path.join(dataDir, 'stacks.pid')}).`,
    );
}

export function restored(archive: string, manifest: Manifest, movedAside: string | null): RestoreResult {
  return {
    archive,
    createdAt: manifest.createdAt,
    schemaVersion: manifest.schemaVersion,
    movedAside,
    libraries: manifest.libraries.length,
    snippets: manifest.libraries.reduce((n, l) => n + l.versions.reduce((m, v) => m + v.snippets, 0), 0),
  };
}

/** The data dir's own files and folders a restore replaces (the databases' files aside). */
export const DATA_NAMES: readonly string[] = [...DATA_FILES, ...new Set(DATA_TREES.map((t) => t.split('/')[0]!))];

/** Unpacks the archive into `work` and checks it (verified), refusing one of a newer schema than this Stacks knows. */
export async function verified(archive: string, work: string): Promise<Manifest> {
  if (!fs.existsSync(archive)) throw new ApiError('validation_error', `No such file: ${archive}`);
  const manifest = await unpackArchive(archive, work);
  const schema = Math.max(manifest.schemaVersion, schemaVersionOfFile(path.join(work, MAIN_DB)));
  if (schema > SCHEMA_VERSION) {
    throw new ApiError(
      'validation_error',
      `${path.basename(archive)} was taken by a newer Stacks (${manifest.stacksVersion}, database schema ${schema}; this one knows up to ${SCHEMA_VERSION}): upgrade Stacks, then restore.`,
    );
  }
  return manifest;
}

/** Moves the named entries of a data dir into `aside`; returns it, or null when there was nothing to move. */
export function moveAside(dataDir: string, aside: string, names: readonly string[]): string | null {
  const present = names.filter((n) => fs.existsSync(path.join(dataDir, n)));
  if (present.length === 0) return null;
  fs.mkdirSync(aside, { recursive: true });
  for (const name of present) fs.renameSync(path.join(dataDir, name), path.join(aside, name));
  return aside;
}

export function putBack(dataDir: string, aside: string): void {
  for (const name of fs.readdirSync(aside)) {
    fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    fs.renameSync(path.join(aside, name), path.join(dataDir, name));
  }
  fs.rmdirSync(aside);
}

export function ensureDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
