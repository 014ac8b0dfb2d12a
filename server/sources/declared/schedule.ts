import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../../log.ts';
import type { DeclaredSources, ReconcileReport } from './reconcile.ts';
import { operatorActor, type AuditLog } from '../../audit/log.ts';

/**
 * Background work of sources.yaml: a reconcile at start and on `reconcileSchedule`
 * (STACKS_SOURCES_SCHEDULE, 'off' for never), and per declared source a re-index on its own
 * `schedule`. `done` hears every reconcile's report or error (for the log and the audit log).
 */
export function startDeclaredSources(
  declared: Pick<DeclaredSources, 'reconcile' | 'schedules' | 'reindex' | 'onSchedulesChanged'>,
  reconcileSchedule: string,
  log: Logger,
  done: (r: ReconcileReport | Error, trigger: 'start' | 'schedule') => void,
): () => void {
  const run = (trigger: 'start' | 'schedule') =>
    declared.reconcile().then(
      (r) => done(r, trigger),
      (err: Error) => {
        log.error({ err: err.message }, 'sources.yaml not reconciled');
        done(err, trigger);
      },
    );
  const tasks = new Map<string, { expr: string; task: ScheduledTask }>();
  const reload = () => {
    const wanted = new Map(declared.schedules().map((s) => [s.libraryId, s.schedule]));
    for (const [id, t] of tasks) {
      if (wanted.get(id) === t.expr) continue;
      void t.task.destroy();
      tasks.delete(id);
    }
    for (const [id, expr] of wanted) {
      if (tasks.has(id)) continue;
      const task = cron.schedule(
        expr,
        () => {
          declared.reindex(id).then(
            (jobId) => log.info({ libraryId: id, jobId }, 'declared source re-indexed on its schedule'),
            (err: Error) => log.warn({ libraryId: id, err: err.message }, 'declared source not re-indexed'),
          );
        },
        { name: `declared ${id}`, noOverlap: true, unref: true },
      );
      tasks.set(id, { expr, task });
    }
  };
  const unsubscribe = declared.onSchedulesChanged(reload);
  const reconciler =
    reconcileSchedule === 'off' ? null : cron.schedule(reconcileSchedule, () => void run('schedule'), { name: 'sources.yaml', noOverlap: true, unref: true });
  reload();
  void run('start');
  return () => {
    unsubscribe();
    void reconciler?.destroy();
    for (const t of tasks.values()) void t.task.destroy();
    tasks.clear();
  };
}

/** A reconcile that changed something (or failed) is an audit entry of the operator; one that changed nothing is not worth one. */
export function auditReconcile(audit: Pick<AuditLog, 'record'>, file: string): (r: ReconcileReport | Error, trigger: 'start' | 'schedule') => void {
  return (r, trigger) => {
    if (!(r instanceof Error) && !r.created.length && !r.updated.length && !r.pruned.length && !r.errors.length) return;
    const detail =
      r instanceof Error
        ? { trigger, error: r.message }
        : { trigger, created: r.created.length, updated: r.updated.length, pruned: r.pruned.length, errors: r.errors.length };
    audit.record({ actor: operatorActor(), action: 'sourcesReconcile', target: file, outcome: r instanceof Error ? 'failed' : 'ok', detail });
  };
}
