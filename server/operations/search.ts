import type { AccessPolicy, ContextService, LibrarySearchService, SearchService } from '../search/answer-types.ts';
import { contextOperation, librariesOperation, libsSearchOperation, searchOperation } from '../contracts/search.ts';
import type { binder } from './bind.ts';
import type { Caller } from './admit.ts';
import { OPERATOR, type Principal, type Reader } from '../../lib/model.ts';

/** Whom a read is for: the local CLI reads as the operator (every library), others as their key or anonymously. */
export const readerOf = (p: Principal | null, caller: Caller): Reader => (caller.kind === 'local' ? OPERATOR : p);

export interface SearchOperationDeps {
  context: ContextService;
  search: SearchService;
  librarySearch: LibrarySearchService;
  access: AccessPolicy;
}

/** /api/v2/context, /api/v3/search, /api/v2/libs/search, /api/libraries; the MCP tools and `stacks search|resolve` over them. */
export function searchOperations(bind: ReturnType<typeof binder>, d: SearchOperationDeps) {
  return {
    context: bind(contextOperation, async (i, p, caller) => ({
      format: i.type,
      answer: await d.context.query({ libraryId: i.libraryId, query: i.query, fast: i.fast, researchMode: i.researchMode }, readerOf(p, caller)),
    })),
    search: bind(searchOperation, async (i, p, caller) => ({
      format: i.type,
      answer: await d.search.search({ query: i.query, libraries: i.library, version: i.version, language: i.language }, readerOf(p, caller)),
    })),
    libsSearch: bind(libsSearchOperation, (i, p, caller) => d.librarySearch.search({ libraryName: i.libraryName, query: i.query }, readerOf(p, caller))),
    libraries: bind(librariesOperation, async (_i, p, caller) => ({
      libraries: await d.librarySearch.list(readerOf(p, caller)),
      searchFilterApplied: d.access.filtersActive(readerOf(p, caller)),
    })),
  };
}
