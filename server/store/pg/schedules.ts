import type { ScheduleStore } from '../schedules.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery } from './transaction.ts';

/** Scheduled runs taken on PostgreSQL, method for method SQLite's ScheduleStore (server/store/schedules.ts). */
export class PgScheduleStore implements SameShape<ScheduleStore> {
  constructor(private readonly pool: PgPool) {}

  /** The primary key decides between nodes: of several inserts of one key, one lands, the others do nothing. */
  async claim(key: string, now: string, expiresAt: string): Promise<boolean> {
    await pgQuery(this.pool, 'DELETE FROM schedule_runs WHERE expires_at <= $1', [now]);
    const { rowCount } = await pgQuery(this.pool, 'INSERT INTO schedule_runs (key, claimed_at, expires_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING', [
      key,
      now,
      expiresAt,
    ]);
    return rowCount === 1;
  }
}
