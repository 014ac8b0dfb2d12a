import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../../log.ts';
import type { DeclaredSources, ReconcileReport } from './reconcile.ts';
import { operatorActor, type AuditLog } from '../../audit/log.ts';
import type { ClusterCron } from '../../jobs/cron.ts';

/**
 * Background work of sources.yaml: a reconcile at start and on `reconcileSchedule`
 * (STACKS_SOURCES_SCHEDULE, 'off' for never), and per declared source a re-index on its own
 * `schedule` (each firing run by one of the nodes sharing the database). `done` hears every reconcile's report or error (for the log and the audit log).
 */
export function startDeclaredSources(
  declared: Pick<DeclaredSources, 'reconcile' | 'schedules' | 'reindex' | 'onSchedulesChanged'>,
  reconcileSchedule: string,
  cluster: ClusterCron,
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
  // Reloads may overlap (start and a reconcile): only the latest one started applies what it read.
  let generation = 0;
  let stopped = false;
  const reload = async () => {
    const mine = ++generation;
    let schedules;
    try {
      schedules = await declared.schedules();
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'declared schedules could not be read');
      return;
    }
    if (mine !== generation || stopped) return;
    const wanted = new Map(schedules.map((s) => [s.libraryId, s.schedule]));
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
        { name: `declared ${id}`, noOverlap: true, unref: true, ...cluster },
      );
      tasks.set(id, { expr, task });
    }
  };
  const unsubscribe = declared.onSchedulesChanged(() => void reload());
  const reconciler =
    reconcileSchedule === 'off'
      ? null
      : cron.schedule(reconcileSchedule, () => void run('schedule'), { name: 'sources.yaml', noOverlap: true, unref: true, ...cluster });
  void reload();
  void run('start');
  return () => {
    stopped = true;
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
    void audit.record({ actor: operatorActor(), action: 'sourcesReconcile', target: file, outcome: r instanceof Error ? 'failed' : 'ok', detail });
  };
}
