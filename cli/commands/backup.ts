import path from 'node:path';
import type { Command } from 'commander';
import { configFrom, output, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import { inspectBackup, LOCAL, restoreBackup, restoreBackupToPostgres } from '../../server/operations/index.ts';

/**
 * `stacks backup [--out DIR]`: an archive of the data dir, taken beside a running server if there
 * is one; `stacks restore ARCHIVE --yes`: the data dir replaced by an archive's (the server stopped),
 * or with STACKS_DATABASE_URL the PostgreSQL database and the data dir's files (every node stopped).
 */
export function backupCommand(program: Command): void {
  withDataDir(program.command('backup').description('write a backup archive (.tar.gz) of the data dir; safe while the server runs'))
    .option('--out <dir>', 'folder for the archive (default: STACKS_BACKUP_DIR, else <data dir>/backups)')
    .action(async (opts: CommonOpts & { out?: string }) => {
      await withServices(opts, async (s) => {
        const r = await s.operations.backupWrite({ out: opts.out ? path.resolve(opts.out) : undefined }, LOCAL);
        output(
          opts,
          r,
          () =>
            `Backup written: ${r.file} (${(r.bytes / 1024 / 1024).toFixed(1)} MB; ${r.libraries} libraries, ${r.snippets} snippets, schema ${r.schemaVersion}${r.activeJobs ? `; ${r.activeJobs} pending jobs run again after a restore` : ''}).`,
        );
      });
    });
  withDataDir(
    program
      .command('restore')
      .description('replace the data dir with a backup archive (stop the server first); the current data is moved aside, never deleted')
      .argument('<archive>'),
  )
    .option('--yes', 'really replace the data dir (without it: check the archive and say what would happen)')
    .action(async (archive: string, opts: CommonOpts & { yes?: boolean }) => {
      const file = path.resolve(archive);
      const { dataDir, databaseUrl } = configFrom(opts);
      if (!opts.yes) {
        const m = await inspectBackup(file, dataDir);
        const replaced = databaseUrl
          ? `the PostgreSQL database's data (STACKS_DATABASE_URL; its rows are replaced, stop every node first) and ${dataDir}'s files (moved aside, not deleted)`
          : `${dataDir}'s databases and files (moved aside, not deleted)`;
        throw new ApiError(
          'validation_error',
          `${archive} is a valid backup of ${m.createdAt} (schema ${m.schemaVersion}, ${m.libraries.length} libraries). Restoring replaces ${replaced}: run again with --yes.`,
        );
      }
      const r = databaseUrl ? await restoreBackupToPostgres(file, dataDir, databaseUrl) : await restoreBackup(file, dataDir);
      // Opening the restored data dir applies the migrations an older archive lacks; the restore is recorded in its audit log.
      await withServices(opts, (s) =>
        s.operations.backupRestored({ archive: file, createdAt: r.createdAt, schemaVersion: r.schemaVersion, movedAside: r.movedAside }, LOCAL),
      );
      output(opts, r, () => [
        `Restored ${r.libraries} libraries (${r.snippets} snippets) from the backup of ${r.createdAt}.`,
        r.movedAside ? `The previous data is in ${r.movedAside}.` : 'The data dir held no data before.',
      ]);
    });
}
