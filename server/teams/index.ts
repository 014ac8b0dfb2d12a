import type { Stores } from '../store/stores.ts';
import type { KeyService } from '../auth/keys.ts';
import type { LicenseService } from '../license/license.ts';
import type { Config } from '../config.ts';
import type { Principal } from '../../lib/model.ts';
import { TeamCache } from './cache.ts';
import { systemClock, type Clock } from './clock.ts';
import { PolicyService } from './policy.ts';
import { TeamAccessPolicy } from './access.ts';
import { RuleService } from './rules.ts';
import { PlanService } from './plans.ts';
import { UsageService } from './usage.ts';
import { MemberService } from './members.ts';
import { TeamspaceService } from './teamspaces.ts';
import { ClusterTokenBuckets, TokenBuckets } from './rate-limit.ts';

/**
 * The teamspaces feature: policies (library filters, source types), usage metering and limits,
 * plans, rules, members. `access` is the AccessPolicy the search services consult.
 */
export class TeamService {
  readonly store: Stores['teams'];
  readonly cache: TeamCache;
  readonly policies: PolicyService;
  readonly access: TeamAccessPolicy;
  readonly rules: RuleService;
  readonly plans: PlanService;
  readonly usage: UsageService;
  readonly members: MemberService;
  readonly teamspaces: TeamspaceService;
  /** False skips counting and limits in the HTTP meter; bench/accounting.ts flips it to measure their cost. */
  metering = true;
  private defaultId: number | null = null;

  constructor(
    store: Stores,
    private readonly keys: KeyService,
    license: LicenseService,
    config: Pick<Config, 'rateLimitPerMinute'>,
    /** Shared by every part; tests may replace `clock.now` to cross a day or month. */
    readonly clock: Clock = systemClock(),
  ) {
    this.store = store.teams;
    this.cache = new TeamCache(this.store.policy);
    const teamspaceOf = (p: Principal | null) => this.teamspaceOf(p);
    const now = () => this.clock.now().toISOString();
    this.policies = new PolicyService(store, this.store, this.cache, this.clock);
    this.access = new TeamAccessPolicy(this.cache, teamspaceOf, this.clock);
    this.rules = new RuleService(store, this.store, this.cache, () => this.defaultTeamspaceId(keys), now);
    this.plans = new PlanService(store, this.store, this.cache);
    // PostgreSQL: a key's requests may reach any node, so its bucket is in the database; SQLite's one node keeps it in memory.
    const buckets = store.rateLimits
      ? new ClusterTokenBuckets(store.rateLimits, config.rateLimitPerMinute)
      : new TokenBuckets(config.rateLimitPerMinute, () => this.clock.now().getTime());
    this.usage = new UsageService(this.store, buckets, this.clock, teamspaceOf);
    this.members = new MemberService(store, this.store, keys, license, now);
    this.teamspaces = new TeamspaceService(store, this.store, this.members, now);
  }

  /** The default (first) teamspace: anonymous callers and the CLI act in it. */
  defaultTeamspaceId(keys: KeyService = this.keys): number {
    if (this.defaultId === null) this.defaultId = keys.defaultTeamspaceId();
    return this.defaultId;
  }

  teamspaceOf(principal: Principal | null): number {
    return principal ? principal.teamspaceId : this.defaultTeamspaceId();
  }
}

export type { PolicySourceType } from '../contracts/policy.ts';
