import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import type { BackupService } from '../backup/service.ts';
import { backupCreateOperation, backupDownloadOperation, backupsListOperation } from '../contracts/backup.ts';
import type { binder } from './bind.ts';

export interface BackupOperationDeps {
  backups: Pick<BackupService, 'create' | 'list' | 'archivePath' | 'directory'>;
  defaultTeamspaceId(): number;
}

/** Backups hold every teamspace's data: only the default teamspace's owners and admins (who administer the instance) and the operator take them. */
export function backupOperations(bind: ReturnType<typeof binder>, d: BackupOperationDeps) {
  const instanceAdmin = (p: Principal | null) => {
    if (p && p.teamspaceId !== d.defaultTeamspaceId()) throw new ApiError('forbidden', 'A backup holds the whole instance: an owner or admin of the default teamspace takes it.');
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
    /** The archive's path; the entry point sends the file. */
    backupDownload: bind(backupDownloadOperation, (i, p) => {
      instanceAdmin(p);
      return { name: i.name, file: d.backups.archivePath(i.name) };
    }),
  };
}
