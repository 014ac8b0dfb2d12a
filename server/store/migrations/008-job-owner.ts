import type { Migration } from './migration.ts';

/**
 * Running jobs record which process runs them and when it last said so. A process that starts
 * requeues only jobs whose owner is gone (a dead pid on this host, or a heartbeat gone stale),
 * so a CLI command and a server sharing one data dir never take each other's running jobs.
 */
export const m008: Migration = {
  version: 8,
  name: 'job-owner',
  up(db) {
    db.exec(`
      ALTER TABLE jobs ADD COLUMN owner TEXT;
      ALTER TABLE jobs ADD COLUMN heartbeat_at TEXT;
    `);
  },
};
