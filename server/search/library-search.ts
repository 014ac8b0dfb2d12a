import type { Reader } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AccessPolicy, LibrarySearchEntry, LibrarySearchService } from './answer-types.ts';
import { defaultVersion, type CatalogEntry } from './catalog.ts';
import type { LibrarySelector, RankedLibrary } from './select.ts';
import { parseLibraryValue } from './select.ts';
import type { Step } from './read-steps.ts';
import { Question } from './query.ts';
import { TUNING } from './tuning.ts';

/**
 * GET /api/v2/libs/search (what `resolve-library-id` of the official clients calls): libraries
 * whose names match `libraryName`, best name match first, then by how well their documentation
 * matches `query`. An exact library ID is listed first when it is indexed.
 */
/** Runs selection's steps over the catalogue as the backend reads it (MultiLibrarySearch.withSelector). */
export interface SelectorRunner {
  withSelector<T>(fn: (selector: LibrarySelector) => Step<T>): Promise<T>;
}

export class StoreLibrarySearch implements LibrarySearchService {
  constructor(private readonly depsOf: () => { selection: SelectorRunner; access: AccessPolicy }) {}

  async search(req: { libraryName: string; query: string }, principal: Reader): Promise<{ results: LibrarySearchEntry[]; searchFilterApplied: boolean }> {
    const { selection, access } = this.depsOf();
    const parsed = parseLibraryValue(req.libraryName);
    const ranked = await selection.withSelector((selector) => ranking(selector, parsed, principal, req.query));
    if (ranked.length === 0) {
      throw new ApiError('no_libraries_found', `No indexed library matches "${req.libraryName}".`);
    }
    return { results: ranked.slice(0, TUNING.librarySearch.limit).map((r) => toEntry(r.entry)), searchFilterApplied: access.filtersActive(principal) };
  }

  async list(principal: Reader): Promise<LibrarySearchEntry[]> {
    const visible = await this.depsOf().selection.withSelector(function* (selector) {
      return selector.visible(principal);
    });
    return visible.map(toEntry).sort((a, b) => a.id.localeCompare(b.id));
  }
}

/** The libraries matching a typed name, best first, an exact ID first of all. */
function* ranking(selector: LibrarySelector, parsed: ReturnType<typeof parseLibraryValue>, principal: Reader, query: string): Step<RankedLibrary[]> {
  const ranked = yield* selector.rankByNameStep(parsed.name, principal, new Question(query), TUNING.librarySearch.minScore);
  if (parsed.id) {
    const id = parsed.id.toLowerCase();
    const exact = selector.visible(principal).find((e) => e.library.id.toLowerCase() === id);
    if (exact) {
      const i = ranked.findIndex((r) => r.entry === exact);
      if (i >= 0) ranked.splice(i, 1);
      ranked.unshift({ entry: exact, score: 2, reason: 'exact ID' });
    }
  }
  return ranked;
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
