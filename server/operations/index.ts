import type { TeamService } from '../teams/index.ts';
import { binder, admitter, type BindDeps } from './bind.ts';
import { searchOperations, type SearchOperationDeps } from './search.ts';
import { sourceOperations, type SourceOperationDeps } from './sources.ts';
import { jobOperations, type JobOperationDeps } from './jobs.ts';
import { localTeamspace, teamOperations } from './teams.ts';
import { libraryOperations, type LibraryOperationDeps } from './libraries.ts';
import { auditOperations, type AuditOperationDeps } from './audit.ts';
import { userOperations, type UserOperationDeps } from './users.ts';
import { systemOperations, type SystemOperationDeps } from './system.ts';
import { gitOperations, type GitOperationDeps } from './git.ts';
import { backupOperations, type BackupOperationDeps } from './backup.ts';
import { exportOperations, type ExportOperationDeps } from './exports.ts';
import { metricsOperations, type MetricsOperationDeps } from './metrics.ts';
import { declaredOperations, type DeclaredOperationDeps } from './declared.ts';
import { invitationOperations, type InvitationOperationDeps } from './invitations.ts';
import { instanceOperations, type InstanceOperationDeps } from './instance.ts';
import { callerOperations, type CallerOperationDeps } from './callers.ts';

/**
 * The service layer's front door: every operation that REST, MCP and the CLI offer, each one
 * validated against its contract (server/contracts) and admitted (key, role, license, source
 * policy) here, once, before its service runs. Entry points only translate their own input into
 * the contract's shape, and the answer into their own output.
 */

export type { Caller, RequestSession } from './admit.ts';
export { asKey, LOCAL, localIn } from './admit.ts';
export { inspectBackup, restoreBackup, restoreBackupToPostgres } from './backup.ts';
/** `stacks store copy`: like a restore, it works on the data dir's files before any service opens them. */
export { copyStoreFromPostgres, copyStoreToPostgres } from '../system/store-copy.ts';
export { signLicense } from './system.ts';

export type OperationDeps = BindDeps &
  SearchOperationDeps &
  SourceOperationDeps &
  JobOperationDeps &
  LibraryOperationDeps &
  AuditOperationDeps &
  UserOperationDeps &
  SystemOperationDeps &
  GitOperationDeps &
  BackupOperationDeps &
  ExportOperationDeps &
  MetricsOperationDeps &
  DeclaredOperationDeps &
  InvitationOperationDeps &
  InstanceOperationDeps &
  CallerOperationDeps & { teams: TeamService };

export function createOperations(d: OperationDeps) {
  const bind = binder(d);
  return {
    /** Checks only who may call an operation: before an upload is read. */
    admit: admitter(d),
    ...searchOperations(bind, d),
    ...sourceOperations(bind, d),
    ...jobOperations(bind, d),
    ...libraryOperations(bind, d),
    ...auditOperations(bind, d),
    // Named, not spread: a spread would read `access`, which the composition root sets up after this.
    ...userOperations(bind, { users: d.users, signIn: d.signIn, ssoEnabled: d.ssoEnabled, localTeamspace: (caller) => localTeamspace(d.teams, caller) }),
    ...systemOperations(bind, d),
    ...gitOperations(bind, d),
    ...backupOperations(bind, d),
    ...exportOperations(bind, d),
    ...metricsOperations(bind, d),
    ...declaredOperations(bind, d),
    ...invitationOperations(bind, d),
    ...instanceOperations(bind, d),
    ...teamOperations(bind, d.teams),
    ...callerOperations(bind, d),
  };
}

export type Operations = ReturnType<typeof createOperations>;
