/**
 * Per-key request rate: a token bucket per caller (API key, or client address when anonymous)
 * holding `perMinute` tokens and refilling continuously. In memory: a restart forgets at most
 * one minute of history, which is harmless for a burst limit (monthly counters are in SQLite).
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

export class TokenBuckets {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly perMinute: number) {}

  get limit(): number {
    return this.perMinute;
  }

  take(key: string, nowMs: number): TakeResult {
    const cap = this.perMinute;
    const perMs = cap / 60_000;
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size > 100_000) this.sweep(nowMs);
      b = { tokens: cap, at: nowMs };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(cap, b.tokens + Math.max(0, nowMs - b.at) * perMs);
    b.at = nowMs;
    const fullAt = (t: number) => Math.ceil((nowMs + (cap - t) / perMs) / 1000);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true, remaining: Math.floor(b.tokens), retryAfter: 0, reset: fullAt(b.tokens) };
    }
    return { ok: false, remaining: 0, retryAfter: Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)), reset: fullAt(b.tokens) };
  }

  /** Drops buckets that are full again (they carry no state). */
  private sweep(nowMs: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (nowMs - b.at) * (this.perMinute / 60_000) >= this.perMinute) this.buckets.delete(k);
  }
}
