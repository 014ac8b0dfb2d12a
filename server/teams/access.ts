import type { AccessPolicy } from '../search/answer-types.ts';
import { principalOf, type Library, type Principal, type Reader } from '../../lib/model.ts';
import type { TeamCache } from './cache.ts';
import { libraryKey } from './cache.ts';
import type { Clock } from './clock.ts';
import { libraryAllowed, type CompiledPolicy } from './policy-filter.ts';

/**
 * The AccessPolicy the search services consult: which libraries a reader may see (visibility,
 * grants, and the reader's teamspace policy) and the rules that go with an answer. Anonymous
 * callers see only instance-wide libraries, under the default (first) teamspace's policy and
 * rules; the local operator sees everything. Served from TeamCache, so a check costs a few set lookups.
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
  private memo = new WeakMap<Library, { compiled: CompiledPolicy; viewer: number; minute: number; ok: boolean }>();

  canSee(reader: Reader, library: Library): boolean {
    if (reader && 'operator' in reader) return true;
    const compiled = this.cache.compiled(this.teamspaceOf(reader));
    // The reader's own teamspace; -1 for an anonymous caller, who belongs to none.
    const viewer = reader ? reader.teamspaceId : -1;
    const nowMs = this.clock.now().getTime();
    const minute = Math.floor(nowMs / 60_000);
    const m = this.memo.get(library);
    if (m && m.compiled === compiled && m.viewer === viewer && m.minute === minute) return m.ok;
    const ok = libraryAllowed(compiled, reader ? reader.teamspaceId : null, library, nowMs);
    this.memo.set(library, { compiled, viewer, minute, ok });
    return ok;
  }

  filtersActive(reader: Reader): boolean {
    if (reader && 'operator' in reader) return false;
    return this.cache.compiled(this.teamspaceOf(reader)).narrows;
  }

  rules(reader: Reader, libraryIds: string[]): { global: string[]; libraries: { libraryId: string; libraryOwn: string[]; libraryTeam: string[] }[] } {
    const r = this.cache.rules(this.teamspaceOf(principalOf(reader)));
    return {
      global: [...r.global],
      libraries: libraryIds.map((libraryId) => {
        const k = libraryKey(libraryId);
        return { libraryId, libraryOwn: [...(r.own.get(k) ?? [])], libraryTeam: [...(r.team.get(k) ?? [])] };
      }),
    };
  }
}
