import type { RateLimitStore } from '../store/rate-limits.ts';

/**
 * Per-key request rate: a token bucket per caller (API key, or client address when anonymous)
 * holding `perMinute` tokens and refilling continuously. Two keepers of the buckets, one interface
 * (RateLimiter): TokenBuckets in this process's memory (SQLite: one node; a restart forgets at most
 * one minute of history, harmless for a burst limit), ClusterTokenBuckets in PostgreSQL, where the
 * limit must hold across every node a load balancer spreads a key's requests over.
 */
export interface TakeResult {
  ok: boolean;
  /** Tokens left after this request. */
  remaining: number;
  /** Seconds until one token is available again (0 when ok). */
  retryAfter: number;
  /** Unix time (seconds) when the bucket is full again. */
  reset: number;
}

export interface RateLimiter {
  /** Requests per key and minute; 0 (or less): no limit, and take is not called. */
  readonly limit: number;
  /** Takes one request's token from the key's bucket, or says when there is one again. */
  take(key: string): TakeResult | Promise<TakeResult>;
}

/** The answer for a bucket left with `tokens` at `nowMs` after a request that got a token (`ok`) or not. */
function outcome(ok: boolean, tokens: number, nowMs: number, cap: number): TakeResult {
  const perMs = cap / 60_000;
  const reset = Math.ceil((nowMs + (cap - tokens) / perMs) / 1000);
  if (ok) return { ok, remaining: Math.floor(tokens), retryAfter: 0, reset };
  return { ok, remaining: 0, retryAfter: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)), reset };
}

/** The buckets in this process's memory, by the caller's clock (`now`, epoch milliseconds; tests move it). */
export class TokenBuckets implements RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  get limit(): number {
    return this.perMinute;
  }

  take(key: string): TakeResult {
    const nowMs = this.now();
    const cap = this.perMinute;
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size > 100_000) this.sweep(nowMs);
      b = { tokens: cap, at: nowMs };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(cap, b.tokens + Math.max(0, nowMs - b.at) * (cap / 60_000));
    b.at = nowMs;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    return outcome(ok, b.tokens, nowMs, cap);
  }

  /** Drops buckets that are full again (they carry no state). */
  private sweep(nowMs: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (nowMs - b.at) * (this.perMinute / 60_000) >= this.perMinute) this.buckets.delete(k);
  }
}

/** How often (node clock, milliseconds) a take of this node also sweeps the full buckets out of the shared table. */
const SWEEP_EVERY_MS = 30_000;

/**
 * The buckets in the database every node shares (RateLimitStore): one statement per request, by the
 * database's clock, so the limit is exact whichever node each request reaches. The node's clock only
 * decides when a take also sweeps (every SWEEP_EVERY_MS per node: the table holds the keys seen in
 * about the last minute).
 */
export class ClusterTokenBuckets implements RateLimiter {
  private lastSweep = 0;

  constructor(
    private readonly store: RateLimitStore,
    private readonly perMinute: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  get limit(): number {
    return this.perMinute;
  }

  async take(key: string): Promise<TakeResult> {
    const nodeMs = this.now();
    const sweep = nodeMs - this.lastSweep >= SWEEP_EVERY_MS;
    if (sweep) this.lastSweep = nodeMs;
    const t = await this.store.take(key, this.perMinute, sweep);
    return outcome(t.taken, t.tokens, t.atMs, this.perMinute);
  }
}
