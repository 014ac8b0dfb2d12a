import type { AccessPolicy, ContextService, LibrarySearchService, SearchService } from '../search/contracts.ts';
import { contextOperation, librariesOperation, libsSearchOperation, searchOperation } from '../contracts/search.ts';
import type { binder } from './bind.ts';

export interface SearchOperationDeps {
  context: ContextService;
  search: SearchService;
  librarySearch: LibrarySearchService;
  access: AccessPolicy;
}

/** /api/v2/context, /api/v3/search, /api/v2/libs/search, /api/libraries; the MCP tools and `stacks search|resolve` over them. */
export function searchOperations(bind: ReturnType<typeof binder>, d: SearchOperationDeps) {
  return {
    context: bind(contextOperation, async (i, p) => ({
      format: i.type,
      answer: await d.context.query({ libraryId: i.libraryId, query: i.query, fast: i.fast, researchMode: i.researchMode }, p),
    })),
    search: bind(searchOperation, async (i, p) => ({
      format: i.type,
      answer: await d.search.search({ query: i.query, libraries: i.library, version: i.version, language: i.language }, p),
    })),
    libsSearch: bind(libsSearchOperation, (i, p) => d.librarySearch.search({ libraryName: i.libraryName, query: i.query }, p)),
    libraries: bind(librariesOperation, (_i, p) => ({ libraries: d.librarySearch.list(p), searchFilterApplied: d.access.filtersActive(p) })),
  };
}
