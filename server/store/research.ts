import type { Db } from './db.ts';

/** Research-mode usage per member and ISO week (table research_usage). */
export class ResearchUsageStore {
  constructor(private readonly db: Db) {}

  /**
   * Counts one research request when the member is under the quota, atomically (one UPSERT with a
   * guard), so concurrent requests cannot overshoot. Returns the count after the call and whether it was taken.
   */
  async take(memberId: number, week: string, quota: number): Promise<{ taken: boolean; used: number }> {
    return this.db.transaction(() => {
      const info = this.db
        .prepare(
          `INSERT INTO research_usage (member_id, week, count) SELECT ?, ?, 1 WHERE ? > 0
           ON CONFLICT (member_id, week) DO UPDATE SET count = count + 1 WHERE count < ?`,
        )
        .run(memberId, week, quota, quota);
      return { taken: info.changes > 0, used: this.count(memberId, week) };
    })();
  }

  /** Gives a request back (the research pipeline failed before answering). */
  async refund(memberId: number, week: string): Promise<void> {
    this.db.prepare('UPDATE research_usage SET count = max(count - 1, 0) WHERE member_id = ? AND week = ?').run(memberId, week);
  }

  async used(memberId: number, week: string): Promise<number> {
    return this.count(memberId, week);
  }

  private count(memberId: number, week: string): number {
    const r = this.db.prepare('SELECT count FROM research_usage WHERE member_id = ? AND week = ?').get(memberId, week) as { count: number } | undefined;
    return r?.count ?? 0;
  }
}
