import type { AccessPolicy } from '../search/contracts.ts';
import type { Library, Principal } from '../../lib/model.ts';
import type { TeamCache } from './cache.ts';
import { libraryKey } from './cache.ts';
import type { Clock } from './clock.ts';
import { libraryAllowed, type CompiledPolicy } from './policy-filter.ts';

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

  /**
   * Last decision per library object. Search asks about every catalog entry on each request; the
   * answer only changes with the policy (a new compiled object) or, through maxAgeDays, with time,
   * so it is reused for the same policy within the same minute.
   */
  private memo = new WeakMap<Library, { compiled: CompiledPolicy; teamspaceId: number; minute: number; ok: boolean }>();

  canSee(principal: Principal | null, library: Library): boolean {
    const teamspaceId = this.teamspaceOf(principal);
    const compiled = this.cache.compiled(teamspaceId);
    const nowMs = this.clock.now().getTime();
    const minute = Math.floor(nowMs / 60_000);
    const m = this.memo.get(library);
    if (m && m.compiled === compiled && m.teamspaceId === teamspaceId && m.minute === minute) return m.ok;
    const ok = libraryAllowed(compiled, teamspaceId, library, nowMs);
    this.memo.set(library, { compiled, teamspaceId, minute, ok });
    return ok;
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
