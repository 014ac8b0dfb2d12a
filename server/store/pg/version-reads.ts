import type { VersionReads } from '../version-reads.ts';
import type { PgSearchModelStore } from './search-models.ts';
import type { PgSearchStore } from './search.ts';
import type { PgSnippetStore } from './snippets.ts';
import type { PgTermStore } from './terms.ts';

/**
 * PostgreSQL's twins as the reads of the pipeline's stages (server/store/version-reads.ts): each read
 * a promise, the postings of a version's query terms in one statement. Run the stages inside
 * PgSearchStore.snapshot so that all their reads see one state of the database.
 */
export function pgVersionReads(stores: { search: PgSearchStore; terms: PgTermStore; snippets: PgSnippetStore; models: PgSearchModelStore }): VersionReads {
  const { search, terms, snippets, models } = stores;
  return {
    owner: search,
    vectorsReady: (versionId) => search.vectorsReady(versionId),
    knn: (versionId, query, k) => search.knn(versionId, query, k),
    versionKey: (versionId) => terms.versionKey(versionId),
    chunks: (versionId) => terms.chunks(versionId),
    postings: (versionId, list) => terms.postingsOf(versionId, list),
    withEmbeddings: (ids) => snippets.withEmbeddings(ids),
    byIds: (ids) => snippets.byIds(ids),
    sectionCode: (versionId, section) => search.sectionCode(versionId, section),
    page: (versionId, pageUrl) => search.page(versionId, pageUrl),
    modelBuiltAt: (versionId) => models.builtAt(versionId),
    model: (versionId) => models.get(versionId),
  };
}
