import type { Db } from './db.ts';

/** Scheduled runs taken (migration 023): which process runs a cron slot that every process sharing the database fires. */
export class ScheduleStore {
  constructor(private readonly db: Db) {}

  /**
   * Takes the run `key` (a task's name and due time) until `expiresAt`; false when another process
   * took it first. Expired runs are dropped on the way: a key is only ever asked for around its due time.
   */
  async claim(key: string, now: string, expiresAt: string): Promise<boolean> {
    return this.db.transaction(() => {
      this.db.prepare('DELETE FROM schedule_runs WHERE expires_at <= ?').run(now);
      return (
        this.db.prepare('INSERT INTO schedule_runs (key, claimed_at, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING').run(key, now, expiresAt)
          .changes === 1
      );
    })();
  }
}
