import type { BucketTake, RateLimitStore } from '../rate-limits.ts';
import type { PgPool } from './pool.ts';
import { named, pgQuery } from './transaction.ts';

/** Buckets one sweep deletes at most: it rides on a request's statement, which must stay short. */
const SWEEP_LIMIT = 5000;

/**
 * The request rate limit's buckets on PostgreSQL (migration 004), shared by every node. A take is
 * ONE statement, an UPSERT whose conflict branch refills and takes under the row's lock, so two
 * nodes taking from one key at once are serialised by PostgreSQL and none can spend a token twice.
 *
 * The time is the database's (clock_timestamp()), not the node's: the refill is the time between
 * two takes, and two takes of one key may come from two nodes whose clocks differ. With the nodes'
 * clocks, a node behind the others would see no time pass and one ahead would refill for its lead
 * on every alternation, so the limit would be exact only up to the nodes' skew; one clock makes it exact.
 */
export class PgRateLimitStore implements RateLimitStore {
  constructor(private readonly pool: PgPool) {}

  async take(key: string, capacity: number, sweep: boolean): Promise<BucketTake> {
    // refill: the bucket's tokens plus the time since its last take, at `capacity` per minute, capped.
    const refill = 'least($2::float8, b.tokens + greatest(0, excluded.at_ms - b.at_ms) * $2::float8 / 60000)';
    // The sweep is a data-modifying CTE of the same statement (no second round trip). It leaves out
    // this request's key: one statement must not both delete and update a row. A bucket another
    // node takes from meanwhile is updated before the delete sees it, and then not old any more.
    const { rows } = await pgQuery<{ tokens: number; at_ms: number; granted: boolean }>(
      this.pool,
      named(`WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms),
       swept AS (
         DELETE FROM rate_buckets WHERE $3::boolean AND key IN (
           SELECT key FROM rate_buckets WHERE at_ms < (SELECT ms FROM now) - 60000 AND key <> $1 LIMIT ${SWEEP_LIMIT} FOR UPDATE SKIP LOCKED
         )
       )
       INSERT INTO rate_buckets AS b (key, tokens, at_ms, granted)
         SELECT $1, $2::float8 - 1, ms, true FROM now
       ON CONFLICT (key) DO UPDATE SET
         tokens = CASE WHEN ${refill} >= 1 THEN ${refill} - 1 ELSE ${refill} END,
         granted = ${refill} >= 1,
         at_ms = greatest(b.at_ms, excluded.at_ms)
       RETURNING tokens, at_ms, granted`),
      [key, capacity, sweep],
    );
    const r = rows[0];
    return { taken: r.granted, tokens: r.tokens, atMs: r.at_ms };
  }
}
