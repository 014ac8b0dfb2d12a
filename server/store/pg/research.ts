import type { ResearchUsageStore } from '../research.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery } from './transaction.ts';

/** Research-mode usage per member and ISO week on PostgreSQL, method for method SQLite's ResearchUsageStore (server/store/research.ts). */
export class PgResearchUsageStore implements SameShape<ResearchUsageStore> {
  constructor(private readonly pool: PgPool) {}

  /**
   * Counts one research request when the member is under the quota. One UPSERT with a guard: the
   * conflicting row is locked and its count checked after the lock, so nodes taking at once never
   * overshoot the quota. When nothing was taken, the count is read after the refusal.
   */
  async take(memberId: number, week: string, quota: number): Promise<{ taken: boolean; used: number }> {
    const { rows } = await pgQuery<{ count: number }>(
      this.pool,
      `INSERT INTO research_usage (member_id, week, count) SELECT $1, $2, 1 WHERE $3::int > 0
       ON CONFLICT (member_id, week) DO UPDATE SET count = research_usage.count + 1 WHERE research_usage.count < $3::int
       RETURNING count`,
      [memberId, week, quota],
    );
    if (rows[0]) return { taken: true, used: rows[0].count };
    return { taken: false, used: await this.used(memberId, week) };
  }

  /** Gives a request back (the research pipeline failed before answering). */
  async refund(memberId: number, week: string): Promise<void> {
    await pgQuery(this.pool, 'UPDATE research_usage SET count = greatest(count - 1, 0) WHERE member_id = $1 AND week = $2', [memberId, week]);
  }

  async used(memberId: number, week: string): Promise<number> {
    return (
      (await pgQuery<{ count: number }>(this.pool, 'SELECT count FROM research_usage WHERE member_id = $1 AND week = $2', [memberId, week])).rows[0]?.count ?? 0
    );
  }
}
