import type { Migration } from './migration.ts';

/**
 * One row per scheduled run taken (a crawl schedule's, the backup's, the declared sources'), keyed by
 * the task's name and the time it was due: every Stacks process that shares the database fires the
 * same cron slot, and only the one whose insert lands runs it (ScheduleStore.claim). Rows expire.
 */
export const m023: Migration = {
  version: 23,
  name: 'schedule-runs',
  up(db) {
    db.exec(`
      CREATE TABLE schedule_runs (
        key TEXT PRIMARY KEY,
        claimed_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX schedule_runs_expiry ON schedule_runs (expires_at);
    `);
  },
};
