import type { Stores } from '../store/stores.ts';
import type { LibraryMeta, Principal } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { TeamCache } from './cache.ts';
import type { Clock } from './clock.ts';
import { libraryAllowed, policySourceTypeOf, type CompiledPolicy } from './policy-filter.ts';
import { mergePolicy, parseStoredPolicy, defaultPolicy } from './policy-defaults.ts';
import { policySchema, type Policy, type PolicySourceType } from '../contracts/policy.ts';
import { validate } from '../../lib/validate.ts';

/** The response of GET /api/v2/policies. */
export interface PolicyView extends Policy {
  accessibleLibraryCount: number;
}

/** Reading and changing teamspace policies, and the checks derived from them. */
export class PolicyService {
  constructor(
    private readonly store: Stores,
    private readonly teams: Stores['teams'],
    private readonly cache: TeamCache,
    private readonly clock: Clock,
  ) {}

  async get(teamspaceId: number): Promise<Policy> {
    const row = await this.teams.teamspace(teamspaceId);
    if (!row) throw new ApiError('not_found', `No teamspace with id ${teamspaceId}.`);
    return parseStoredPolicy(row.policy_json);
  }

  compiled(teamspaceId: number): CompiledPolicy {
    return this.cache.compiled(teamspaceId);
  }

  async view(teamspaceId: number): Promise<PolicyView> {
    const p = await this.get(teamspaceId);
    return { sourceTypes: p.sourceTypes, libraryFilters: p.libraryFilters, accessibleLibraryCount: await this.accessibleLibraryCount(teamspaceId) };
  }

  /** Instance-wide (public) libraries that this teamspace's members can be served. */
  async accessibleLibraryCount(teamspaceId: number): Promise<number> {
    const c = this.cache.compiled(teamspaceId);
    const now = this.clock.now().getTime();
    let n = 0;
    for (const lib of await this.store.libraries.list()) if (lib.visibility === 'instance' && libraryAllowed(c, teamspaceId, lib, now)) n++;
    return n;
  }

  /**
   * Changes a policy. `replace` false (PATCH): the input is merged into the current policy,
   * objects key by key, arrays replaced. `replace` true (PUT): the input is merged into the defaults.
   * Unknown fields and wrong types are a validation_error naming the field.
   */
  async update(teamspaceId: number, input: unknown, replace = false): Promise<Policy> {
    const base = await (replace ? defaultPolicy() : this.get(teamspaceId));
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ApiError('validation_error', 'The policy must be a JSON object.');
    const { accessibleLibraryCount: _ignored, ...rest } = input as Record<string, unknown>;
    const next = validate(policySchema, mergePolicy(base, rest));
    await this.store.accounts.updateTeamspace(teamspaceId, { policy_json: JSON.stringify(next) });
    await this.cache.invalidate();
    return next;
  }

  sourceEnabled(teamspaceId: number, sourceType: PolicySourceType): boolean {
    return !this.cache.compiled(teamspaceId).disabled.has(sourceType);
  }
}

/** What sourceRefusal needs from the services container. */
export interface SourceCheckServices {
  teams: { policies: PolicyService; teamspaceOf(principal: Principal | null): number };
}

/**
 * For imports of pre-parsed libraries: the reason a library of this kind may not be added by the
 * caller's teamspace (its source type is disabled), or null. The import endpoint skips such
 * libraries with this reason instead of failing the whole upload.
 */
export function sourceRefusal(
  services: SourceCheckServices,
  principal: Principal | null,
  meta: Pick<LibraryMeta, 'sourceType' | 'sourceUrl' | 'visibility'>,
): string | null {
  const type = policySourceTypeOf({ sourceType: meta.sourceType, sourceUrl: meta.sourceUrl ?? null, visibility: meta.visibility ?? 'teamspace' });
  return services.teams.policies.sourceEnabled(services.teams.teamspaceOf(principal), type) ? null : `${type} sources are disabled by this teamspace's policy`;
}

export type { PolicySourceType };
