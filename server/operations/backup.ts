import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import { ALL_PAGES, type BackupService } from '../backup/service.ts';
import { backupCreateOperation, backupDownloadOperation, backupRestoredOperation, backupsListOperation, backupWriteOperation } from '../contracts/backup.ts';
import type { binder } from './bind.ts';

/**
 * `stacks restore`: checking an archive and replacing the data dir (or, with STACKS_DATABASE_URL,
 * the PostgreSQL database and the data dir's files) with it happen before any service opens the
 * databases (nothing may hold them open), so they are not bound
 * operations; `backupRestored` then records the restore in the restored audit log.
 */
export { inspectArchive as inspectBackup, restoreArchive as restoreBackup } from '../backup/restore.ts';
export { restoreArchiveToPostgres as restoreBackupToPostgres } from '../backup/postgres.ts';

export interface BackupOperationDeps {
  backups: Pick<BackupService, 'create' | 'list' | 'archivePath' | 'directory'>;
  defaultTeamspaceId(): number;
}

/** Backups hold every teamspace's data: only the default teamspace's owners and admins (who administer the instance) and the operator take them. */
export function backupOperations(bind: ReturnType<typeof binder>, d: BackupOperationDeps) {
  const instanceAdmin = (p: Principal | null) => {
    if (p && p.teamspaceId !== d.defaultTeamspaceId())
      throw new ApiError('forbidden', 'A backup holds the whole instance: an owner or admin of the default teamspace takes it.');
  };
  return {
    backupCreate: bind(backupCreateOperation, (_i, p, caller) => {
      instanceAdmin(p);
      return d.backups.create(caller.kind === 'local' ? 'cli' : 'api');
    }),
    backupsList: bind(backupsListOperation, (_i, p) => {
      instanceAdmin(p);
      return { directory: d.backups.directory, backups: d.backups.list() };
    }),
    /** `stacks backup`: in one step (nothing waits between steps), into `out` when given. */
    backupWrite: bind(backupWriteOperation, (i) => d.backups.create('cli', { outDir: i.out, pagesPerStep: ALL_PAGES })),
    backupRestored: bind(backupRestoredOperation, () => undefined),
    /** The archive's path; the entry point sends the file. */
    backupDownload: bind(backupDownloadOperation, (i, p) => {
      instanceAdmin(p);
      return { name: i.name, file: d.backups.archivePath(i.name) };
    }),
  };
}
