import type { Reader } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AccessPolicy, LibrarySearchEntry, LibrarySearchService } from './answer-types.ts';
import { defaultVersion, type CatalogEntry } from './catalog.ts';
import type { LibrarySelector } from './select.ts';
import { parseLibraryValue } from './select.ts';
import { Question } from './query.ts';
import { TUNING } from './tuning.ts';

/**
 * GET /api/v2/libs/search (what `resolve-library-id` of the official clients calls): libraries
 * whose names match `libraryName`, best name match first, then by how well their documentation
 * matches `query`. An exact library ID is listed first when it is indexed.
 */
export class StoreLibrarySearch implements LibrarySearchService {
  constructor(private readonly depsOf: () => { selector: LibrarySelector; access: AccessPolicy }) {}

  async search(req: { libraryName: string; query: string }, principal: Reader): Promise<{ results: LibrarySearchEntry[]; searchFilterApplied: boolean }> {
    const { selector, access } = this.depsOf();
    const parsed = parseLibraryValue(req.libraryName);
    const ranked = selector.rankByName(parsed.name, principal, new Question(req.query), TUNING.librarySearch.minScore);
    if (parsed.id) {
      const exact = selector.visible(principal).find((e) => e.library.id.toLowerCase() === parsed.id!.toLowerCase());
      if (exact) {
        const i = ranked.findIndex((r) => r.entry === exact);
        if (i >= 0) ranked.splice(i, 1);
        ranked.unshift({ entry: exact, score: 2, reason: 'exact ID' });
      }
    }
    if (ranked.length === 0) {
      throw new ApiError('no_libraries_found', `No indexed library matches "${req.libraryName}".`);
    }
    return { results: ranked.slice(0, TUNING.librarySearch.limit).map((r) => toEntry(r.entry)), searchFilterApplied: access.filtersActive(principal) };
  }

  list(principal: Reader): LibrarySearchEntry[] {
    return this.depsOf()
      .selector.visible(principal)
      .map(toEntry)
      .sort((a, b) => a.id.localeCompare(b.id));
  }
}

/** The public fields of a library in the shape the official clients read (-1 = unknown, as they expect). */
export function toEntry(e: CatalogEntry): LibrarySearchEntry {
  const lib = e.library;
  const v = defaultVersion(e);
  const versions = e.tagged.filter((t) => t.totalSnippets > 0).map((t) => t.tag);
  return {
    id: lib.id,
    title: lib.title,
    description: lib.description,
    branch: lib.branch ?? '',
    lastUpdateDate: v?.updatedAt ?? lib.updatedAt,
    state: 'finalized',
    totalTokens: v?.totalTokens ?? 0,
    totalSnippets: v?.totalSnippets ?? 0,
    stars: lib.stars ?? -1,
    trustScore: lib.trustScore ?? -1,
    benchmarkScore: -1,
    versions,
    source: lib.docsRepoUrl ?? lib.sourceUrl ?? lib.docsSiteUrl ?? '',
  };
}
