import type { Stores } from '../store/stores.ts';
import { effectiveIncluded, type MeterJudgment } from '../store/meter-rule.ts';
import type { Principal, Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { addDays, monthStart, nextMonthStart, utcDay, type Clock } from './clock.ts';
import type { Plan } from './plans.ts';
import type { RateLimiter } from './rate-limit.ts';

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

/**
 * The team store as either backend has it (Stores), countRequests kept generic: a mapped type such
 * as EitherShape loses a method's type parameter, and both backends' countRequests have it.
 */
/** Name of the synthetic member that anonymous requests are counted under. */
export const ANONYMOUS_MEMBER = '(anonymous)';

/**
 * Counting and limiting of search/context/MCP requests. A request is judged and counted in one
 * transaction (TeamStore.countRequests: read the member's month, judge by meter-rule.ts, add to
 * the counters; SQLite's IMMEDIATE transaction, or PostgreSQL's one statement that locks the
 * counter rows), so no increment is lost and no two concurrent requests can both take the last
 * included request, in this process or across processes and nodes sharing the database. This
 * service answers what was judged: the headers, or the refusal.
 */
export class UsageService {
  private anonymous = new Map<number, number>();
  /** Requests waiting for the next batched decision (meterSoon). */
  private queue: { who: { memberId: number; teamspaceId: number }; resolve: (o: MeterOutcome) => void; reject: (e: unknown) => void }[] = [];

  constructor(
    private readonly teams: Stores['teams'],
    private readonly buckets: RateLimiter,
    private readonly clock: Clock,
    private readonly teamspaceOf: (p: Principal | null) => number,
  ) {}

  /** The member a request is counted under: the key's member, or the teamspace's anonymous member. */
  async memberOf(principal: Principal | null): Promise<{ memberId: number; teamspaceId: number }> {
    if (principal) return { memberId: principal.memberId, teamspaceId: principal.teamspaceId };
    const teamspaceId = this.teamspaceOf(null);
    let memberId = this.anonymous.get(teamspaceId);
    if (memberId === undefined) {
      memberId = await this.teams.anonymousMember(teamspaceId, ANONYMOUS_MEMBER, this.clock.now().toISOString());
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
  async meter(principal: Principal | null, client: string): Promise<MeterOutcome> {
    await this.checkRate(principal, client);
    const who = await this.memberOf(principal);
    const now = this.clock.now();
    const [r] = await this.teams.countRequests([who], utcDay(now), (judged) => this.answer(judged, now));
    if (r && 'ok' in r) return r.ok;
    throw r?.err;
  }

  /**
   * meter() for concurrent requests: the requests that arrive within one turn of the event loop
   * are decided and counted in ONE immediate transaction, each in arrival order and against the
   * counts of those before it, so the outcome is the one meter() would give one by one, while the
   * write (and the WAL it grows, which slows every reader) is shared. Resolves once committed.
   */
  async meterSoon(principal: Principal | null, client: string): Promise<MeterOutcome> {
    await this.checkRate(principal, client);
    // Anonymous callers' member is known after the first request; only that first one waits here.
    const who = principal ? { memberId: principal.memberId, teamspaceId: principal.teamspaceId } : await this.memberOf(null);
    return new Promise((resolve, reject) => {
      this.queue.push({ who, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    const now = this.clock.now();
    let results: ({ ok: MeterOutcome } | { err: unknown })[];
    try {
      // A refusal counts nothing, so the others in the transaction stand.
      results = await this.teams.countRequests(
        batch.map((b) => b.who),
        utcDay(now),
        (judged) => this.answer(judged, now),
      );
    } catch (err) {
      for (const b of batch) b.reject(err);
      return;
    }
    results.forEach((r, i) => ('ok' in r ? batch[i]!.resolve(r.ok) : batch[i]!.reject(r.err)));
  }

  /**
   * The per-minute token bucket of the key (or the anonymous client's address): in memory, or on
   * PostgreSQL one statement (one round trip). It comes before the count, which a request refused
   * here must not reach.
   */
  private async checkRate(principal: Principal | null, client: string): Promise<void> {
    if (this.buckets.limit <= 0) return;
    const t = await this.buckets.take(principal ? (principal.userId ? `user:${principal.userId}` : `key:${principal.keyId}`) : `anon:${client}`);
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

  /** The answer to one request as its transaction judged it (TeamStore.countRequests, meter-rule.ts): its headers, or the refusal. */
  private answer({ verdict, teamspace: t, used }: MeterJudgment, now: Date): MeterOutcome {
    const reset = Math.floor(nextMonthStart(now).getTime() / 1000);
    if (!t || verdict === 'noTeamspace') throw new ApiError('internal_error', 'The teamspace of this request is missing.');
    const included = effectiveIncluded(t);
    const headers = (requests: number) => ({
      'RateLimit-Limit': String(included),
      'RateLimit-Remaining': String(Math.max(0, included - requests)),
      'RateLimit-Reset': String(reset),
    });
    switch (verdict) {
      case 'included':
      case 'extra':
        return { headers: headers(used + 1), extra: verdict === 'extra' };
      case 'freePlanUsedUp':
        throw new ApiError(
          'rate_limit_exceeded',
          `The free plan includes ${included} requests per member and month; they are used up until ${new Date(reset * 1000).toISOString()}.`,
          {
            headers: { 'Retry-After': String(Math.max(1, reset - Math.floor(now.getTime() / 1000))), ...headers(used) },
          },
        );
      case 'spendingLimit':
        throw new ApiError(
          'spending_limit_exceeded',
          `The teamspace's monthly spending limit of ${t.spending_limit_cents} cents is reached; an owner or admin can raise it, or it resets on ${new Date(reset * 1000).toISOString().slice(0, 10)}.`,
          { headers: headers(used) },
        );
    }
  }

  /** Usage for GET /api/v2/usage: the member's and the teamspace's month, and `days` days of daily history ending today. */
  async report(principal: Principal, days: number): Promise<UsageReport> {
    const now = this.clock.now();
    const t = await this.teams.teamspace(principal.teamspaceId);
    if (!t) throw new ApiError('not_found', 'The teamspace of this key no longer exists.');
    const window = t.plan === 'free' ? Math.min(days, 10) : days;
    const today = utcDay(now);
    const month = today.slice(0, 7);
    const included = effectiveIncluded(t);
    const mine = await this.teams.memberMonth(principal.memberId, month);
    const team = await this.teams.teamMonth(t.id, month);
    const from = addDays(today, -(window - 1));
    const byDay = new Map((await this.teams.teamDaily(t.id, from, today)).map((r) => [r.day, r.requests]));
    const overDays = (rows: { day: string; requests: number }[]) => {
      const by = new Map(rows.map((r) => [r.day, r.requests]));
      const out: { date: string; requests: number }[] = [];
      for (let d = from; d <= today; d = addDays(d, 1)) out.push({ date: d, requests: by.get(d) ?? 0 });
      return out;
    };
    const daily = overDays([...byDay].map(([day, requests]) => ({ day, requests })));
    let byMember: NonNullable<UsageReport['teamspace']['byMember']> | undefined;
    if (principal.role === 'owner' || principal.role === 'admin') {
      byMember = [];
      for (const m of await this.teams.people(t.id)) {
        const d = overDays(await this.teams.memberDaily(m.id, from, today));
        byMember.push({ id: m.id, name: m.name, requests: d.reduce((n, x) => n + x.requests, 0), daily: d });
      }
    }
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
        members: await this.teams.peopleCount(t.id),
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
