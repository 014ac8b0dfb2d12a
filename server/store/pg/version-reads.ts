import type { VersionReads } from '../version-reads.ts';
import type { PgSearchStore } from './search.ts';
import type { PgSnippetStore } from './snippets.ts';
import type { PgTermStore } from './terms.ts';

/**
 * PostgreSQL's twins as the reads of the per-version retrieval stage (server/store/version-reads.ts):
 * each read a promise, the postings of a version's query terms in one statement. Run the stage inside
 * PgSearchStore.snapshot so that all its reads see one state of the database.
 */
export function pgVersionReads(stores: { search: PgSearchStore; terms: PgTermStore; snippets: PgSnippetStore }): VersionReads {
  const { search, terms, snippets } = stores;
  return {
    owner: search,
    vectorsReady: (versionId) => search.vectorsReady(versionId),
    knn: (versionId, query, k) => search.knn(versionId, query, k),
    versionKey: (versionId) => terms.versionKey(versionId),
    chunks: (versionId) => terms.chunks(versionId),
    postings: (versionId, list) => terms.postingsOf(versionId, list),
    withEmbeddings: (ids) => snippets.withEmbeddings(ids),
    byIds: (ids) => snippets.byIds(ids),
  };
}
