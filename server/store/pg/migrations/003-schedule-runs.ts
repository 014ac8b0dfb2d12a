import type { PgMigration } from './migration.ts';

/** SQLite's migration 023: the scheduled runs taken, one per task and due time, so that a cron slot runs on one node of the cluster. */
export const m003: PgMigration = {
  version: 3,
  name: 'schedule-runs',
  sql: `
    CREATE TABLE schedule_runs (
      key TEXT PRIMARY KEY,
      claimed_at TEXT NOT NULL,
      expires_at TEXT NOT NULL
    );
    CREATE INDEX schedule_runs_expiry ON schedule_runs (expires_at);
  `,
};
