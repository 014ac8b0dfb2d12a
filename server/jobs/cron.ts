import type { RunCoordinator, TaskOptions } from 'node-cron';
import type { ScheduleStore } from '../store/schedules.ts';

/** How long a taken run is remembered: far longer than the clocks of two nodes disagree, short enough to keep the table small. */
const REMEMBERED_MS = 3_600_000;

/**
 * node-cron's options for a task that every Stacks process sharing the database schedules (a
 * cluster's nodes): each process fires the slot, and node-cron asks the coordinator before running
 * it with the key `<task name>:<due time>`, the same on every node whatever its clock; the
 * database's unique key lets one node take it (ScheduleStore.claim). A database error skips the
 * run (node-cron fails closed) rather than running it everywhere. Task names must be the same on
 * every node: they name what runs (`backup`, `crawl /org/lib`).
 */
export function runOnceAcrossNodes(runs: Pick<ScheduleStore, 'claim'>): Pick<TaskOptions, 'distributed' | 'runCoordinator'> {
  const runCoordinator: RunCoordinator = {
    shouldRun(key, ttlMs) {
      const now = new Date();
      return runs.claim(key, now.toISOString(), new Date(now.getTime() + Math.max(ttlMs, REMEMBERED_MS)).toISOString());
    },
  };
  return { distributed: true, runCoordinator };
}

export type ClusterCron = ReturnType<typeof runOnceAcrossNodes>;
