import type { Stores } from '../store/stores.ts';
import type { AccessPolicy } from '../search/answer-types.ts';
import { ApiError } from '../../lib/errors.ts';
import { parseLibraryId, principalOf, type Library, type LibraryVisibility, type Reader } from '../../lib/model.ts';

export interface LibraryView {
  id: string;
  title: string;
  description: string;
  sourceType: string;
  sourceUrl: string | null;
  teamspace: string | null;
  visibility: LibraryVisibility;
  grants?: string[];
  /** A crawled website's re-crawl schedule (cron), or null. */
  schedule?: string | null;
  /** Trust metadata (docs/git.md): set by admins; a Git repository's license is detected when not set. */
  stars: number | null;
  trustScore: number | null;
  verified: boolean;
  license: string | null;
  /** A library added from a Git repository: its URL. */
  repoUrl?: string;
  versions: { tag: string; state: string; snippets: number; tokens: number; updatedAt: string }[];
  createdAt: string;
  updatedAt: string;
}

/** Trust metadata an admin sets (stars mean nothing offline): undefined leaves a field, null clears it. */
export interface TrustInput {
  stars?: number | null;
  trustScore?: number | null;
  verified?: boolean;
  license?: string | null;
}

export interface SnippetPage {
  libraryId: string;
  tag: string;
  total: number;
  snippets: { id: number; kind: 'code' | 'info'; title: string; source: string; tokens: number; text: string; code: { language: string; code: string }[] }[];
  next: number | null;
}

/**
 * One library's details, its snippets, and who may read it. Reading goes through the same AccessPolicy as
 * search, so a library the reader may not see is `library_not_found`, exactly like a missing one.
 * Changing it (visibility, grants, deleting it) is for the owners and admins of the owner teamspace
 * (the contracts admit only those roles) and for the local operator.
 */
export class LibraryAccessService {
  constructor(
    private readonly store: Stores,
    private readonly access: () => AccessPolicy,
    /** Owner of libraries written before teamspaces owned them. */
    private readonly defaultTeamspaceId: () => number,
  ) {}

  async view(reader: Reader, rawId: string): Promise<LibraryView> {
    return this.toView(reader, await this.visible(reader, rawId));
  }

  /** Every library the reader may see, served or not, in stored order. */
  async list(reader: Reader): Promise<LibraryView[]> {
    const seen = (await this.store.libraries.list()).filter((lib) => this.access().canSee(reader, lib));
    const out: LibraryView[] = [];
    for (const lib of seen) out.push(await this.toView(reader, lib));
    return out;
  }

  /** One library as stored, with every version row (what `stacks libraries show` prints). */
  async record(reader: Reader, rawId: string) {
    const lib = await this.visible(reader, rawId);
    return { ...lib, versions: await this.store.libraries.versions(lib.id) };
  }

  /**
   * A library the reader may change (owner or admin of its owner teamspace, or the operator):
   * library_not_found when it may not even see it, forbidden when it sees but does not own it.
   */
  async managed(reader: Reader, rawId: string): Promise<Library> {
    const lib = await this.visible(reader, rawId);
    if (!this.manages(reader, lib)) throw new ApiError('forbidden', `Only the owners and admins of the teamspace that owns ${lib.id} can change it.`);
    return lib;
  }

  /**
   * A library the reader may index again from its source: one it may change, or (a member) one its
   * own teamspace owns. library_not_found when it may not see it.
   */
  async refreshable(reader: Reader, rawId: string): Promise<Library> {
    const lib = await this.visible(reader, rawId);
    const p = principalOf(reader);
    if (this.manages(reader, lib) || (p && (lib.teamspaceId ?? this.defaultTeamspaceId()) === p.teamspaceId)) return lib;
    throw new ApiError('forbidden', `Only members of the teamspace that owns ${lib.id} can refresh it.`);
  }

  /** Deletes a library with every version and snippet. */
  async delete(reader: Reader, rawId: string): Promise<void> {
    const lib = await this.managed(reader, rawId);
    await this.store.libraries.delete(lib.id);
  }

  /** A page of the snippets the library serves (current documentation, or `tag`), in stored order; `after` is the previous page's `next`. */
  async snippets(reader: Reader, rawId: string, page: { tag?: string; after?: number; limit: number }): Promise<SnippetPage> {
    const lib = await this.visible(reader, rawId);
    const version = await this.store.libraries.currentVersion(lib.id, page.tag ?? '');
    if (!version || version.state !== 'ready') throw new ApiError('library_not_found', `${lib.id} has no served version${page.tag ? ` ${page.tag}` : ''}.`);
    const rows = await this.store.snippets.list(version.id, page.limit + 1, page.after ?? 0);
    const shown = rows.slice(0, page.limit);
    return {
      libraryId: lib.id,
      tag: version.tag || 'current',
      total: version.totalSnippets,
      snippets: shown.map((r) => ({
        id: r.id,
        kind: r.kind,
        title: r.kind === 'code' ? r.title : r.breadcrumb || r.pageTitle || r.title,
        source: r.sourceId,
        tokens: r.tokens,
        text: r.kind === 'code' ? r.description : r.content,
        code: r.codeList,
      })),
      next: rows.length > page.limit ? shown[shown.length - 1]!.id : null,
    };
  }

  async update(
    reader: Reader,
    rawId: string,
    input: { visibility?: LibraryVisibility; grants?: string[]; title?: string; description?: string } & TrustInput,
  ): Promise<LibraryView> {
    const lib = await this.managed(reader, rawId);
    if (input.title !== undefined || input.description !== undefined)
      await this.store.libraries.setMeta(lib.id, { title: input.title, description: input.description });
    if (input.stars !== undefined || input.trustScore !== undefined || input.verified !== undefined || input.license !== undefined) {
      await this.store.libraries.setTrust(lib.id, { stars: input.stars, trustScore: input.trustScore, verified: input.verified, license: input.license });
    }
    const grants = input.grants === undefined ? lib.grants : await Promise.all(input.grants.map((name) => this.teamspaceId(name)));
    const owner = lib.teamspaceId ?? this.defaultTeamspaceId();
    if (input.visibility !== undefined || input.grants !== undefined)
      await this.store.libraries.setAccess(
        lib.id,
        input.visibility ?? lib.visibility,
        grants.filter((t) => t !== owner),
      );
    return this.toView(reader, (await this.store.libraries.get(lib.id))!);
  }

  private async visible(reader: Reader, rawId: string): Promise<Library> {
    const id = parseLibraryId(rawId)?.id ?? rawId;
    const lib = await this.store.libraries.get(id);
    if (!lib || !this.access().canSee(reader, lib)) throw new ApiError('library_not_found', `No library ${id}.`);
    return lib;
  }

  private manages(reader: Reader, lib: Library): boolean {
    const p = principalOf(reader);
    if (!p) return reader !== null;
    return (lib.teamspaceId ?? this.defaultTeamspaceId()) === p.teamspaceId && (p.role === 'owner' || p.role === 'admin');
  }

  private async teamspaceId(name: string): Promise<number> {
    const t = await this.store.accounts.teamspaceByName(name.trim());
    if (!t) throw new ApiError('validation_error', `grants: no teamspace named "${name}".`);
    return t.id;
  }

  private async teamspaceName(id: number | null): Promise<string | null> {
    return id === null ? null : ((await this.store.accounts.teamspace(id))?.name ?? null);
  }

  private async toView(reader: Reader, lib: Library): Promise<LibraryView> {
    const repo = await this.store.git.repo(lib.id);
    const grants: string[] = [];
    if (this.manages(reader, lib)) for (const t of lib.grants) grants.push((await this.teamspaceName(t)) ?? String(t));
    const versions = await this.store.libraries.versions(lib.id);
    return {
      id: lib.id,
      title: lib.title,
      description: lib.description,
      sourceType: lib.sourceType,
      sourceUrl: lib.sourceUrl,
      teamspace: await this.teamspaceName(lib.teamspaceId ?? this.defaultTeamspaceId()),
      visibility: lib.visibility,
      ...(this.manages(reader, lib) ? { grants } : {}),
      ...(lib.sourceType === 'website' ? { schedule: (await this.store.crawl.site(lib.id))?.schedule ?? null } : {}),
      stars: lib.stars,
      trustScore: lib.trustScore,
      verified: lib.verified,
      license: lib.license,
      ...(repo ? { repoUrl: repo.repoUrl } : {}),
      versions: versions
        .filter((v) => v.isCurrent)
        .map((v) => ({ tag: v.tag || 'current', state: v.state, snippets: v.totalSnippets, tokens: v.totalTokens, updatedAt: v.updatedAt })),
      createdAt: lib.createdAt,
      updatedAt: lib.updatedAt,
    };
  }
}
