/**
 * Sign-in throttling: after `limit` failures for one name from one address within `windowMs`,
 * that pair waits until the oldest failure leaves the window; an address with `limit * 4`
 * failures (any names) waits too. In memory: a restart forgets, which only helps someone who can
 * restart the server.
 */
export class SignInThrottle {
  private failures = new Map<string, number[]>();

  constructor(
    private readonly limit = 5,
    private readonly windowMs = 15 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait before trying again, or 0. */
  retryAfter(username: string, ip: string): number {
    const t = this.now();
    const wait = (key: string, max: number) => {
      const list = this.recent(key, t);
      return list.length >= max ? Math.ceil((list[0]! + this.windowMs - t) / 1000) : 0;
    };
    return Math.max(wait(`${ip}\u0000${username}`, this.limit), wait(ip, this.limit * 4));
  }

  failed(username: string, ip: string): void {
    const t = this.now();
    for (const key of [`${ip}\u0000${username}`, ip]) this.failures.set(key, [...this.recent(key, t), t]);
    if (this.failures.size > 100_000) this.failures.clear();
  }

  succeeded(username: string, ip: string): void {
    this.failures.delete(`${ip}\u0000${username}`);
  }

  private recent(key: string, t: number): number[] {
    return (this.failures.get(key) ?? []).filter((x) => x > t - this.windowMs);
  }
}
