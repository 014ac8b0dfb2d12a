import type { TeamspaceRow } from './accounts.ts';

/**
 * How a metered request is judged against the counts before it: within the plan's included
 * requests, an extra request (billed), or refused because a free plan's requests are used up, or
 * because its price would take the month's spend past the spending limit. Judged inside the
 * transaction that counts it (TeamStore.countRequests): here on SQLite, and by the same steps in
 * SQL on PostgreSQL (pg/migrations/008-count-requests.ts), so both count exactly alike: a change
 * here needs a new migration that replaces that function (the store tests judge the same cases on both).
 */
export type MeterVerdict = 'included' | 'extra' | 'freePlanUsedUp' | 'spendingLimit' | 'noTeamspace';

/** What a request was judged on, and the verdict: what usage.ts answers from (headers or the refusal). */
export interface MeterJudgment {
  verdict: MeterVerdict;
  teamspace: TeamspaceRow | null;
  /** The member's requests this month before this one. */
  used: number;
}

/** Requests per member and month before a request is refused (free) or billed: none on payg. */
export function effectiveIncluded(row: Pick<TeamspaceRow, 'plan' | 'included_requests'>): number {
  return row.plan === 'payg' ? 0 : row.included_requests;
}

/** The rule (`spentCents` is read only when the spending limit is in question). */
export function meterVerdict(t: TeamspaceRow | null, used: number, spentCents: () => number): MeterVerdict {
  if (!t) return 'noTeamspace';
  if (used < effectiveIncluded(t)) return 'included';
  if (t.plan === 'free') return 'freePlanUsedUp';
  // 1e-9: the spend is a sum of fractional cents; a limit reached exactly must not refuse.
  if (t.spending_limit_cents !== null && spentCents() + t.cents_per_extra_request > t.spending_limit_cents + 1e-9) return 'spendingLimit';
  return 'extra';
}

/** A verdict that counts the request. */
export function counted(verdict: MeterVerdict): boolean {
  return verdict === 'included' || verdict === 'extra';
}

/** `answer` made of one judgment, or the refusal it threw: what countRequests returns per request on either backend. */
export function answerJudged<R>(judged: MeterJudgment, answer: (judged: MeterJudgment) => R): { ok: R } | { err: unknown } {
  try {
    return { ok: answer(judged) };
  } catch (err) {
    return { err };
  }
}
