import type { AccessPolicy } from '../search/contracts.ts';
import type { Library, Principal } from '../model.ts';
import type { TeamCache } from './cache.ts';
import { libraryKey } from './cache.ts';
import type { Clock } from './clock.ts';
import { libraryAllowed } from './policy-filter.ts';

/**
 * The AccessPolicy the search services consult: library visibility from the caller's teamspace
 * policy and the rules that go with an answer. Anonymous callers are treated as members of the
 * default (first) teamspace. Served from TeamCache, so a check costs a few set lookups.
 */
export class TeamAccessPolicy implements AccessPolicy {
  constructor(
    private readonly cache: TeamCache,
    private readonly teamspaceOf: (p: Principal | null) => number,
    private readonly clock: Clock,
  ) {}

  canSee(principal: Principal | null, library: Library): boolean {
    const t = this.teamspaceOf(principal);
    return libraryAllowed(this.cache.compiled(t), t, library, this.clock.now().getTime());
  }

  filtersActive(principal: Principal | null): boolean {
    return this.cache.compiled(this.teamspaceOf(principal)).narrows;
  }

  rules(principal: Principal | null, libraryIds: string[]): { global: string[]; libraries: { libraryId: string; libraryOwn: string[]; libraryTeam: string[] }[] } {
    const r = this.cache.rules(this.teamspaceOf(principal));
    return {
      global: [...r.global],
      libraries: libraryIds.map((libraryId) => {
        const k = libraryKey(libraryId);
        return { libraryId, libraryOwn: [...(r.own.get(k) ?? [])], libraryTeam: [...(r.team.get(k) ?? [])] };
      }),
    };
  }
}
