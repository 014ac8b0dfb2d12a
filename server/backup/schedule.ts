import cron from 'node-cron';
import type { Logger } from '../log.ts';
import type { BackupResult, BackupService } from './service.ts';
import { operatorActor, type AuditLog } from '../audit/log.ts';
import type { ClusterCron } from '../jobs/cron.ts';

/**
 * Background task: a backup at every firing of the cron expression (STACKS_BACKUP_SCHEDULE), the
 * newest scheduled archives kept (STACKS_BACKUP_KEEP). A firing while a backup is still being
 * written is skipped; of the nodes sharing a database, one runs each firing. Returns a stop function.
 */
export function startBackupSchedule(
  backups: Pick<BackupService, 'create'>,
  expr: string,
  cluster: ClusterCron,
  log: Logger,
  done: (r: BackupResult | Error) => void,
): () => void {
  const task = cron.schedule(
    expr,
    async () => {
      try {
        done(await backups.create('schedule'));
      } catch (err) {
        log.error({ err: (err as Error).message }, 'scheduled backup failed');
        done(err as Error);
      }
    },
    { name: 'backup', noOverlap: true, unref: true, ...cluster },
  );
  return () => void task.destroy();
}

/** Each scheduled backup is an audit entry of the operator: the archive written, or the error. */
export function auditScheduledBackup(audit: Pick<AuditLog, 'record'>): (r: BackupResult | Error) => void {
  return (r) => {
    const detail = r instanceof Error ? { trigger: 'schedule', error: r.message } : { trigger: 'schedule', file: r.file, bytes: r.bytes };
    // AuditLog.record never rejects: a failed write goes to its own error handler.
    void audit.record({
      actor: operatorActor(),
      action: 'backupCreate',
      target: r instanceof Error ? null : r.file,
      outcome: r instanceof Error ? 'failed' : 'ok',
      detail,
    });
  };
}
