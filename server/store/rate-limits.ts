/** One request's take from a key's token bucket, as the bucket stands after it. */
export interface BucketTake {
  /** Whether the request got a token. */
  taken: boolean;
  /** Tokens left in the bucket after the request (fractional: it refills continuously). */
  tokens: number;
  /** The time of the take (epoch milliseconds) on the clock the buckets are kept by. */
  atMs: number;
}

/**
 * Token buckets kept where every node sees them (PostgreSQL's rate_buckets, pg/rate-limits.ts):
 * a bucket per key holding up to `capacity` tokens and refilling `capacity` per minute. SQLite has
 * no such store (one node: the buckets stay in the process, server/teams/rate-limit.ts).
 */
export interface RateLimitStore {
  /**
   * Refills the key's bucket for the time since its last take and takes one token when there is one,
   * atomically (concurrent takes of one key, from any node, see each other's). `sweep`: also delete
   * buckets that are full again (untouched for a minute), a bounded number of them.
   */
  take(key: string, capacity: number, sweep: boolean): Promise<BucketTake>;
}
