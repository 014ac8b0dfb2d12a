import type { Store } from '../store/index.ts';
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
    private readonly store: Store,
    private readonly access: () => AccessPolicy,
    /** Owner of libraries written before teamspaces owned them. */
    private readonly defaultTeamspaceId: () => number,
  ) {}

  view(reader: Reader, rawId: string): LibraryView {
    return this.toView(reader, this.visible(reader, rawId));
  }

  /** Every library the reader may see, served or not, in stored order. */
  list(reader: Reader): LibraryView[] {
    return this.store.libraries
      .list()
      .filter((lib) => this.access().canSee(reader, lib))
      .map((lib) => this.toView(reader, lib));
  }

  /** One library as stored, with every version row (what `stacks libraries show` prints). */
  record(reader: Reader, rawId: string) {
    const lib = this.visible(reader, rawId);
    return { ...lib, versions: this.store.libraries.versions(lib.id) };
  }

  /**
   * A library the reader may change (owner or admin of its owner teamspace, or the operator):
   * library_not_found when it may not even see it, forbidden when it sees but does not own it.
   */
  managed(reader: Reader, rawId: string): Library {
    const lib = this.visible(reader, rawId);
    if (!this.manages(reader, lib)) throw new ApiError('forbidden', `Only the owners and admins of the teamspace that owns ${lib.id} can change it.`);
    return lib;
  }

  /**
   * A library the reader may index again from its source: one it may change, or (a member) one its
   * own teamspace owns. library_not_found when it may not see it.
   */
  refreshable(reader: Reader, rawId: string): Library {
    const lib = this.visible(reader, rawId);
    const p = principalOf(reader);
    if (this.manages(reader, lib) || (p && (lib.teamspaceId ?? this.defaultTeamspaceId()) === p.teamspaceId)) return lib;
    throw new ApiError('forbidden', `Only members of the teamspace that owns ${lib.id} can refresh it.`);
  }

  /** Deletes a library with every version and snippet. */
  delete(reader: Reader, rawId: string): void {
    const lib = this.managed(reader, rawId);
    this.store.libraries.delete(lib.id);
  }

  /** A page of the snippets the library serves (current documentation, or `tag`), in stored order; `after` is the previous page's `next`. */
  snippets(reader: Reader, rawId: string, page: { tag?: string; after?: number; limit: number }): SnippetPage {
    const lib = this.visible(reader, rawId);
    const version = this.store.libraries.currentVersion(lib.id, page.tag ?? '');
    if (!version || version.state !== 'ready') throw new ApiError('library_not_found', `${lib.id} has no served version${page.tag ? ` ${page.tag}` : ''}.`);
    const rows = this.store.snippets.list(version.id, page.limit + 1, page.after ?? 0);
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

  update(
    reader: Reader,
    rawId: string,
    input: { visibility?: LibraryVisibility; grants?: string[]; title?: string; description?: string } & TrustInput,
  ): LibraryView {
    const lib = this.managed(reader, rawId);
    if (input.title !== undefined || input.description !== undefined)
      this.store.libraries.setMeta(lib.id, { title: input.title, description: input.description });
    if (input.stars !== undefined || input.trustScore !== undefined || input.verified !== undefined || input.license !== undefined) {
      this.store.libraries.setTrust(lib.id, { stars: input.stars, trustScore: input.trustScore, verified: input.verified, license: input.license });
    }
    const grants = input.grants === undefined ? lib.grants : input.grants.map((name) => this.teamspaceId(name));
    const owner = lib.teamspaceId ?? this.defaultTeamspaceId();
    if (input.visibility !== undefined || input.grants !== undefined)
      this.store.libraries.setAccess(
        lib.id,
        input.visibility ?? lib.visibility,
        grants.filter((t) => t !== owner),
      );
    return this.toView(reader, this.store.libraries.get(lib.id)!);
  }

  private visible(reader: Reader, rawId: string): Library {
    const id = parseLibraryId(rawId)?.id ?? rawId;
    const lib = this.store.libraries.get(id);
    if (!lib || !this.access().canSee(reader, lib)) throw new ApiError('library_not_found', `No library ${id}.`);
    return lib;
  }

  private manages(reader: Reader, lib: Library): boolean {
    const p = principalOf(reader);
    if (!p) return reader !== null;
    return (lib.teamspaceId ?? this.defaultTeamspaceId()) === p.teamspaceId && (p.role === 'owner' || p.role === 'admin');
  }

  private teamspaceId(name: string): number {
    const t = this.store.accounts.teamspaceByName(name.trim());
    if (!t) throw new ApiError('validation_error', `grants: no teamspace named "${name}".`);
    return t.id;
  }

  private teamspaceName(id: number | null): string | null {
    return id === null ? null : (this.store.accounts.teamspace(id)?.name ?? null);
  }

  private toView(reader: Reader, lib: Library): LibraryView {
    return {
      id: lib.id,
      title: lib.title,
      description: lib.description,
      sourceType: lib.sourceType,
      sourceUrl: lib.sourceUrl,
      teamspace: this.teamspaceName(lib.teamspaceId ?? this.defaultTeamspaceId()),
      visibility: lib.visibility,
      ...(this.manages(reader, lib) ? { grants: lib.grants.map((t) => this.teamspaceName(t) ?? String(t)) } : {}),
      ...(lib.sourceType === 'website' ? { schedule: this.store.crawl.site(lib.id)?.schedule ?? null } : {}),
      stars: lib.stars,
      trustScore: lib.trustScore,
      verified: lib.verified,
      license: lib.license,
      ...(this.store.git.repo(lib.id) ? { repoUrl: this.store.git.repo(lib.id)!.repoUrl } : {}),
      versions: this.store.libraries
        .versions(lib.id)
        .filter((v) => v.isCurrent)
        .map((v) => ({ tag: v.tag || 'current', state: v.state, snippets: v.totalSnippets, tokens: v.totalTokens, updatedAt: v.updatedAt })),
      createdAt: lib.createdAt,
      updatedAt: lib.updatedAt,
    };
  }
}
