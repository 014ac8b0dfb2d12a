import type { Stores } from '../store/stores.ts';
import type { RuleKind, RuleRow } from '../store/teams.ts';
import { parseLibraryId } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { TeamCache } from './cache.ts';

/** Rule kinds as the API and CLI name them. */
export type RuleKindName = 'global' | 'libraryOwn' | 'libraryTeam';

const toDb: Record<RuleKindName, RuleKind> = { global: 'global', libraryOwn: 'library_own', libraryTeam: 'library_team' };
const fromDb: Record<RuleKind, RuleKindName> = { global: 'global', library_own: 'libraryOwn', library_team: 'libraryTeam' };

export interface RuleView {
  id: number;
  kind: RuleKindName;
  libraryId: string | null;
  text: string;
  createdAt: string;
}

function view(r: RuleRow): RuleView {
  return { id: r.id, kind: fromDb[r.kind], libraryId: r.library_id, text: r.text, createdAt: r.created_at };
}

/**
 * Team-wide rules (`global`), rules of a library's owner (`libraryOwn`, shown to every teamspace)
 * and a teamspace's own rules for a library (`libraryTeam`). A `libraryOwn` rule may be written
 * by an owner/admin of the teamspace that owns the library, or, for a public library (no owning
 * teamspace), of the default teamspace, which administers the appliance.
 */
export class RuleService {
  constructor(
    private readonly store: Stores,
    private readonly teams: Stores['teams'],
    private readonly cache: TeamCache,
    private readonly defaultTeamspaceId: () => number,
    private readonly now: () => string,
  ) {}

  async list(teamspaceId: number): Promise<RuleView[]> {
    return (await this.teams.rulesFor(teamspaceId)).map(view);
  }

  async add(teamspaceId: number, input: { kind: RuleKindName; libraryId?: string | null; text: string }): Promise<RuleView> {
    const text = input.text.trim();
    if (!text) throw new ApiError('validation_error', 'text must not be empty.');
    let libraryId: string | null = null;
    if (input.kind !== 'global') {
      if (!input.libraryId) throw new ApiError('validation_error', `libraryId is required for ${input.kind} rules.`);
      const parsed = parseLibraryId(input.libraryId);
      if (!parsed) throw new ApiError('invalid_library_id', `"${input.libraryId}" is not a library ID of the form /owner/repo.`);
      libraryId = parsed.id;
      if (input.kind === 'libraryOwn') await this.assertLibraryOwner(teamspaceId, libraryId);
    } else if (input.libraryId) {
      throw new ApiError('validation_error', 'libraryId must not be given for global rules.');
    }
    const id = await this.teams.insertRule(toDb[input.kind], teamspaceId, libraryId, text, this.now());
    await this.cache.invalidate();
    return view((await this.teams.rule(id))!);
  }

  /**
   * The rules a Git repository's stacks.json gives its library (libraryOwn rules of the teamspace
   * that owns it): those it gave before and no longer does are removed, the new ones added.
   */
  async replaceRepositoryRules(libraryId: string, previous: string[], next: string[]): Promise<void> {
    const owner = (await this.store.libraries.get(libraryId))?.teamspaceId ?? this.defaultTeamspaceId();
    for (const r of await this.list(owner))
      if (r.kind === 'libraryOwn' && r.libraryId === libraryId && previous.includes(r.text)) await this.remove(owner, r.id);
    for (const text of next) await this.add(owner, { kind: 'libraryOwn', libraryId, text });
  }

  async remove(teamspaceId: number, id: number): Promise<void> {
    const r = await this.teams.rule(id);
    const visible = r && (r.teamspace_id === teamspaceId || (r.kind === 'library_own' && r.library_id && (await this.ownsLibrary(teamspaceId, r.library_id))));
    if (!r || !visible) throw new ApiError('not_found', `No rule with id ${id} in this teamspace.`);
    await this.teams.deleteRule(id);
    await this.cache.invalidate();
  }

  private async ownsLibrary(teamspaceId: number, libraryId: string): Promise<boolean> {
    const lib = await this.store.libraries.get(libraryId);
    const owner = lib?.teamspaceId ?? this.defaultTeamspaceId();
    return owner === teamspaceId;
  }

  private async assertLibraryOwner(teamspaceId: number, libraryId: string): Promise<void> {
    if (!(await this.ownsLibrary(teamspaceId, libraryId))) {
      throw new ApiError(
        'forbidden',
        `Only the teamspace that owns ${libraryId} can set its library-owner rules; use kind libraryTeam for your teamspace's own rules.`,
      );
    }
  }
}
