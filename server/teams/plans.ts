import type { Stores } from '../store/stores.ts';
import type { TeamspaceRow } from '../store/accounts.ts';
import { ApiError } from '../../lib/errors.ts';
import type { TeamCache } from './cache.ts';
import { effectiveIncluded } from '../store/meter-rule.ts';

export type Plan = TeamspaceRow['plan'];

/** Requests per member and month a plan includes unless configured otherwise. `payg` includes none. */
export const PLAN_DEFAULT_INCLUDED: Record<Plan, number> = { free: 1000, pro: 5000, enterprise: 100000, payg: 0 };

/** Billing settings of a teamspace as the API shows them. */
export interface PlanSettings {
  teamspaceId: number;
  name: string;
  plan: Plan;
  /** Requests each member may make per month before they are refused (free) or billed as extra (other plans). Always 0 on payg. */
  includedRequests: number;
  /** Monthly cap on the spend for extra requests, in cents; null: no cap. */
  spendingLimitCents: number | null;
  /** Price of one extra request, in cents (may be fractional). */
  centsPerExtraRequest: number;
}

export function planSettings(row: TeamspaceRow): PlanSettings {
  return {
    teamspaceId: row.id,
    name: row.name,
    plan: row.plan,
    includedRequests: effectiveIncluded(row),
    spendingLimitCents: row.spending_limit_cents,
    centsPerExtraRequest: row.cents_per_extra_request,
  };
}

/** Plan, included requests and spending limit of a teamspace. */
export class PlanService {
  constructor(
    private readonly store: Stores,
    private readonly teams: Stores['teams'],
    private readonly cache: TeamCache,
  ) {}

  async get(teamspaceId: number): Promise<PlanSettings> {
    const row = await this.teams.teamspace(teamspaceId);
    if (!row) throw new ApiError('not_found', `No teamspace with id ${teamspaceId}.`);
    return planSettings(row);
  }

  /** Changing the plan without includedRequests sets the new plan's default. */
  async update(
    teamspaceId: number,
    input: { plan?: Plan; includedRequests?: number; spendingLimitCents?: number | null; centsPerExtraRequest?: number },
  ): Promise<PlanSettings> {
    const row = await this.teams.teamspace(teamspaceId);
    if (!row) throw new ApiError('not_found', `No teamspace with id ${teamspaceId}.`);
    const fields: Parameters<Stores['accounts']['updateTeamspace']>[1] = {};
    if (input.plan !== undefined) {
      fields.plan = input.plan;
      if (input.includedRequests === undefined && input.plan !== row.plan) fields.included_requests = PLAN_DEFAULT_INCLUDED[input.plan];
    }
    if (input.includedRequests !== undefined) fields.included_requests = input.includedRequests;
    if (input.spendingLimitCents !== undefined) fields.spending_limit_cents = input.spendingLimitCents;
    if (input.centsPerExtraRequest !== undefined) fields.cents_per_extra_request = input.centsPerExtraRequest;
    await this.store.accounts.updateTeamspace(teamspaceId, fields);
    await this.cache.invalidate();
    return this.get(teamspaceId);
  }
}
