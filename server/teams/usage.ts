import type { TeamStore } from '../store/teams.ts';
import type { Principal, Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { addDays, monthStart, nextMonthStart, utcDay, type Clock } from './clock.ts';
import { effectiveIncluded, type Plan } from './plans.ts';
import type { TokenBuckets } from './rate-limit.ts';

export interface MeterOutcome {
  /** RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset for the response. */
  headers: Record<string, string>;
  extra: boolean;
}

export interface UsageReport {
  plan: Plan;
  /** When the monthly numbers restart: the first day of the next month, 00:00 UTC (ISO-8601). */
  resetsAt: string;
  /** First day of the current month, 00:00 UTC. */
  periodStart: string;
  member: {
    id: number;
    name: string;
    role: Role;
    requests: number;
    includedInPlan: number;
    remaining: number;
    extraRequests: number;
  };
  teamspace: {
    id: number;
    name: string;
    members: number;
    requests: number;
    extraRequests: number;
    spendCents: number;
    spendingLimitCents: number | null;
    centsPerExtraRequest: number;
    days: number;
    daily: { date: string; requests: number }[];
    /** For owners and admins: each member's requests over the same days. */
    byMember?: { id: number; name: string; requests: number; daily: { date: string; requests: number }[] }[];
  };
}

/** Name of the synthetic member that anonymous requests are counted under. */
export const ANONYMOUS_MEMBER = '(anonymous)';

/**
 * Counting and limiting of search/context/MCP requests. One request is decided and counted in one
 * IMMEDIATE transaction (read the member's month, compare with the plan, UPSERT the counters), so
 * no increment is lost and no two concurrent requests can both take the last included request,
 * in this process or across processes sharing the database.
 */
export class UsageService {
  private anonymous = new Map<number, number>();
  /** Requests waiting for the next batched decision (meterSoon). */
  private queue: { who: { memberId: number; teamspaceId: number }; resolve: (o: MeterOutcome) => void; reject: (e: unknown) => void }[] = [];

  constructor(
    private readonly teams: TeamStore,
    private readonly buckets: TokenBuckets,
    private readonly clock: Clock,
    private readonly teamspaceOf: (p: Principal | null) => number,
  ) {}

  /** The member a request is counted under: the key's member, or the teamspace's anonymous member. */
  memberOf(principal: Principal | null): { memberId: number; teamspaceId: number } {
    if (principal) return { memberId: principal.memberId, teamspaceId: principal.teamspaceId };
    const teamspaceId = this.teamspaceOf(null);
    let memberId = this.anonymous.get(teamspaceId);
    if (memberId === undefined) {
      memberId = this.teams.anonymousMember(teamspaceId, ANONYMOUS_MEMBER, this.clock.now().toISOString());
      this.anonymous.set(teamspaceId, memberId);
    }
    return { memberId, teamspaceId };
  }

  /**
   * Admits and counts one metered request, or throws: 429 rate_limit_exceeded (per-key rate, or
   * the free plan's included requests used up), 402 spending_limit_exceeded (the extra request
   * would take the month's spend past the teamspace's limit). Refused requests are not counted.
   * `client` identifies an anonymous caller for the per-minute limit (its address).
   */
  meter(principal: Principal | null, client: string): MeterOutcome {
    this.checkRate(principal, client);
    const who = this.memberOf(principal);
    return this.teams.immediate(() => this.decide(who, this.clock.now()));
  }

  /**
   * meter() for concurrent requests: the requests that arrive within one turn of the event loop
   * are decided and counted in ONE immediate transaction, each in arrival order and against the
   * counts of those before it, so the outcome is the one meter() would give one by one, while the
   * write (and the WAL it grows, which slows every reader) is shared. Resolves once committed.
   */
  meterSoon(principal: Principal | null, client: string): Promise<MeterOutcome> {
    return new Promise((resolve, reject) => {
      try {
        this.checkRate(principal, client);
        this.queue.push({ who: this.memberOf(principal), resolve, reject });
      } catch (err) {
        reject(err);
        return;
      }
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    const now = this.clock.now();
    let results: ({ ok: MeterOutcome } | { err: unknown })[];
    try {
      results = this.teams.immediate(() =>
        batch.map((b) => {
          try {
            return { ok: this.decide(b.who, now) };
          } catch (err) {
            // A refusal writes nothing, so the others in the transaction stand.
            return { err };
          }
        }),
      );
    } catch (err) {
      for (const b of batch) b.reject(err);
      return;
    }
    results.forEach((r, i) => ('ok' in r ? batch[i]!.resolve(r.ok) : batch[i]!.reject(r.err)));
  }

  /** The per-minute token bucket of the key (or the anonymous client's address). */
  private checkRate(principal: Principal | null, client: string): void {
    if (this.buckets.limit <= 0) return;
    const t = this.buckets.take(
      principal ? (principal.userId ? `user:${principal.userId}` : `key:${principal.keyId}`) : `anon:${client}`,
      this.clock.now().getTime(),
    );
    if (!t.ok) {
      throw new ApiError('rate_limit_exceeded', `Rate limit of ${this.buckets.limit} requests per minute exceeded; retry in ${t.retryAfter} s.`, {
        headers: {
          'Retry-After': String(t.retryAfter),
          'RateLimit-Limit': String(this.buckets.limit),
          'RateLimit-Remaining': '0',
          'RateLimit-Reset': String(t.reset),
        },
      });
    }
  }

  /** Decides and counts one request; must run inside an immediate transaction. */
  private decide({ memberId, teamspaceId }: { memberId: number; teamspaceId: number }, now: Date): MeterOutcome {
    const nowMs = now.getTime();
    const day = utcDay(now);
    const month = day.slice(0, 7);
    const reset = Math.floor(nextMonthStart(now).getTime() / 1000);
    const t = this.teams.teamspace(teamspaceId);
    if (!t) throw new ApiError('internal_error', `Teamspace ${teamspaceId} is missing.`);
    const included = effectiveIncluded(t);
    const used = this.teams.memberMonth(memberId, month).requests;
    const headers = (requests: number) => ({
      'RateLimit-Limit': String(included),
      'RateLimit-Remaining': String(Math.max(0, included - requests)),
      'RateLimit-Reset': String(reset),
    });
    if (used < included) {
      this.teams.record(memberId, teamspaceId, day, 1, 0, 0);
      return { headers: headers(used + 1), extra: false };
    }
    if (t.plan === 'free') {
      throw new ApiError(
        'rate_limit_exceeded',
        `The free plan includes ${included} requests per member and month; they are used up until ${new Date(reset * 1000).toISOString()}.`,
        {
          headers: { 'Retry-After': String(Math.max(1, reset - Math.floor(nowMs / 1000))), ...headers(used) },
        },
      );
    }
    const price = t.cents_per_extra_request;
    if (t.spending_limit_cents !== null) {
      const spent = this.teams.teamMonth(teamspaceId, month).spend_cents;
      if (spent + price > t.spending_limit_cents + 1e-9) {
        throw new ApiError(
          'spending_limit_exceeded',
          `The teamspace's monthly spending limit of ${t.spending_limit_cents} cents is reached; an owner or admin can raise it, or it resets on ${new Date(reset * 1000).toISOString().slice(0, 10)}.`,
          { headers: headers(used) },
        );
      }
    }
    this.teams.record(memberId, teamspaceId, day, 1, 1, price);
    return { headers: headers(used + 1), extra: true };
  }

  /** Usage for GET /api/v2/usage: the member's and the teamspace's month, and `days` days of daily history ending today. */
  report(principal: Principal, days: number): UsageReport {
    const now = this.clock.now();
    const t = this.teams.teamspace(principal.teamspaceId);
    if (!t) throw new ApiError('not_found', 'The teamspace of this key no longer exists.');
    const window = t.plan === 'free' ? Math.min(days, 10) : days;
    const today = utcDay(now);
    const month = today.slice(0, 7);
    const included = effectiveIncluded(t);
    const mine = this.teams.memberMonth(principal.memberId, month);
    const team = this.teams.teamMonth(t.id, month);
    const from = addDays(today, -(window - 1));
    const byDay = new Map(this.teams.teamDaily(t.id, from, today).map((r) => [r.day, r.requests]));
    const overDays = (rows: { day: string; requests: number }[]) => {
      const by = new Map(rows.map((r) => [r.day, r.requests]));
      const out: { date: string; requests: number }[] = [];
      for (let d = from; d <= today; d = addDays(d, 1)) out.push({ date: d, requests: by.get(d) ?? 0 });
      return out;
    };
    const daily = overDays([...byDay].map(([day, requests]) => ({ day, requests })));
    const byMember =
      principal.role === 'owner' || principal.role === 'admin'
        ? this.teams.people(t.id).map((m) => {
            const d = overDays(this.teams.memberDaily(m.id, from, today));
            return { id: m.id, name: m.name, requests: d.reduce((n, x) => n + x.requests, 0), daily: d };
          })
        : undefined;
    return {
      plan: t.plan,
      resetsAt: nextMonthStart(now).toISOString(),
      periodStart: monthStart(now).toISOString(),
      member: {
        id: principal.memberId,
        name: principal.memberName,
        role: principal.role,
        requests: mine.requests,
        includedInPlan: included,
        remaining: Math.max(0, included - mine.requests),
        extraRequests: mine.extra_requests,
      },
      teamspace: {
        id: t.id,
        name: t.name,
        members: this.teams.peopleCount(t.id),
        requests: team.requests,
        extraRequests: team.extra_requests,
        spendCents: Math.round(team.spend_cents * 100) / 100,
        spendingLimitCents: t.spending_limit_cents,
        centsPerExtraRequest: t.cents_per_extra_request,
        days: window,
        daily,
        ...(byMember ? { byMember } : {}),
      },
    };
  }
}
