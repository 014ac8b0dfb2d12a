import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../store/db.ts';
import type { Logger } from '../log.ts';
import { MAIN_DB, USAGE_DB, SCHEMA_VERSION, snapshotDatabases, summarizeDatabase } from '../store/backup.ts';
import { ApiError } from '../../lib/errors.ts';
import { VERSION } from '../version.ts';
import { FORMAT, fileEntries, filesUnder, writeArchive, type Manifest } from './archive.ts';
import { linkDataFiles } from './data-files.ts';
import type { StagedFiles } from '../ingest/staged-files.ts';

export type BackupTrigger = Manifest['trigger'];

export interface BackupResult {
  file: string;
  bytes: number;
  createdAt: string;
  schemaVersion: number;
  libraries: number;
  snippets: number;
  /** Jobs queued or running at the snapshot; they run again after a restore. */
  activeJobs: number;
}

/**
 * Writes the instance's databases into `dir` as an archive holds them (MAIN_DB and USAGE_DB, SQLite
 * files), each from one consistent snapshot. `pagesPerStep`: the call's own step size for SQLite's
 * online backup (ALL_PAGES from another process than the server), when it has one.
 */
export type DatabaseSnapshot = (dir: string, pagesPerStep?: number) => Promise<void>;

/** SQLite's: the online backup API on the server's own connection, in steps of `pagesPerStep` pages (snapshotDatabases). */
export function sqliteDatabases(db: Db, pagesPerStep: number): DatabaseSnapshot {
  return (dir, steps) => snapshotDatabases(db, dir, steps ?? pagesPerStep);
}

export interface BackupServiceDeps {
  /** The databases' snapshot: sqliteDatabases, or on PostgreSQL postgresDatabases (./postgres.ts). */
  snapshot: DatabaseSnapshot;
  dataDir: string;
  /** Where archives go unless a call names another folder. */
  backupDir: string;
  /** Scheduled archives kept (the newest); older scheduled ones are deleted. Manual archives are never deleted. */
  keep: number;
  log: Logger;
  /** Jobs' staged inputs; on PostgreSQL those other nodes took are fetched here first, so the archive holds every pending job's. */
  staged?: Pick<StagedFiles, 'gather'>;
  now?: () => Date;
}

/** One step for the whole copy: what a process beside the server uses (another connection's write would restart a stepped copy). */
export const ALL_PAGES = 0x7fffffff;

const ARCHIVE = /^stacks-backup-[0-9TZ-]+(-scheduled)?\.tar\.gz$/;

/** Backups of the whole instance: one .tar.gz per call, taken while the server serves. */
export class BackupService {
  private running = false;

  constructor(private readonly d: BackupServiceDeps) {}

  get directory(): string {
    return this.d.backupDir;
  }

  /** `outDir`: another folder than the backup folder (the CLI's --out); `pagesPerStep`: ALL_PAGES from another process than the server. */
  async create(trigger: BackupTrigger, options: { outDir?: string; pagesPerStep?: number } = {}): Promise<BackupResult> {
    const outDir = path.resolve(options.outDir ?? this.d.backupDir);
    if (this.running) throw new ApiError('conflict', 'A backup is being written right now; wait for it to finish.');
    this.running = true;
    const now = (this.d.now ?? (() => new Date()))();
    let work: string | null = null;
    try {
      fs.mkdirSync(outDir, { recursive: true });
      // Beside the data (hard links need the same file system), never inside the archive folder's listing.
      work = fs.mkdtempSync(path.join(this.d.dataDir, '.backup-'));
      const files = path.join(work, 'files');
      await this.d.staged?.gather();
      linkDataFiles(this.d.dataDir, files);
      await this.d.snapshot(work, options.pagesPerStep);
      // Inputs staged while the snapshot was taken, for jobs the snapshot holds.
      await this.d.staged?.gather();
      linkDataFiles(this.d.dataDir, files);
      const summary = summarizeDatabase(path.join(work, MAIN_DB));
      const paths = [MAIN_DB, USAGE_DB, ...filesUnder(files).map((p) => `files/${p}`)];
      const manifest: Manifest = {
        format: FORMAT,
        createdAt: now.toISOString(),
        stacksVersion: VERSION,
        schemaVersion: summary.schemaVersion,
        trigger,
        activeJobs: summary.counts.activeJobs,
        counts: summary.counts,
        libraries: summary.libraries,
        files: await fileEntries(work, paths),
      };
      const name = `stacks-backup-${now.toISOString().replace(/[:.]/g, '-')}${trigger === 'schedule' ? '-scheduled' : ''}.tar.gz`;
      const file = path.join(outDir, name);
      const bytes = await writeArchive(work, manifest, file);
      this.d.log.info({ file, bytes, trigger, libraries: summary.counts.libraries }, 'backup written');
      if (trigger === 'schedule') this.prune(outDir);
      return {
        file,
        bytes,
        createdAt: manifest.createdAt,
        schemaVersion: SCHEMA_VERSION,
        libraries: summary.counts.libraries,
        snippets: summary.counts.snippets,
        activeJobs: summary.counts.activeJobs,
      };
    } finally {
      if (work) fs.rmSync(work, { recursive: true, force: true });
      this.running = false;
    }
  }

  /** The archives in the backup folder, newest first. */
  list(): { name: string; bytes: number; modifiedAt: string; scheduled: boolean }[] {
    if (!fs.existsSync(this.d.backupDir)) return [];
    return fs
      .readdirSync(this.d.backupDir)
      .filter((n) => ARCHIVE.test(n))
      .sort()
      .reverse()
      .map((name) => {
        const st = fs.statSync(path.join(this.d.backupDir, name));
        return { name, bytes: st.size, modifiedAt: st.mtime.toISOString(), scheduled: name.endsWith('-scheduled.tar.gz') };
      });
  }

  /** The path of an archive of the backup folder by its name; not_found for anything else. */
  archivePath(name: string): string {
    if (!ARCHIVE.test(name) || !fs.existsSync(path.join(this.d.backupDir, name))) throw new ApiError('not_found', `No backup named ${name}.`);
    return path.join(this.d.backupDir, name);
  }

  /** Keeps the newest `keep` scheduled archives of a folder. */
  private prune(dir: string): void {
    const scheduled = fs
      .readdirSync(dir)
      .filter((n) => ARCHIVE.test(n) && n.endsWith('-scheduled.tar.gz'))
      .sort()
      .reverse();
    for (const old of scheduled.slice(this.d.keep)) {
      fs.rmSync(path.join(dir, old), { force: true });
      this.d.log.info({ file: old }, 'scheduled backup past the retention deleted');
    }
  }
}
