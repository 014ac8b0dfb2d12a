import type { PostingRow } from '../terms.ts';
import type { SearchReads, VersionReads } from '../version-reads.ts';
import type { PgStore } from './index.ts';
import type { PgSearchModelStore } from './search-models.ts';
import type { PgSearchStore, VersionState } from './search.ts';
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
    sectionCodes: (sections) => search.sectionCodes(sections),
    page: (versionId, pageUrl) => search.page(versionId, pageUrl),
    modelBuiltAt: (versionId) => models.builtAt(versionId),
    model: (versionId) => models.get(versionId),
  };
}

const pgSearch = new WeakMap<PgStore, SearchReads>();

/**
 * PostgreSQL's twins as the search side's reads (server/store/version-reads.ts SearchReads), one
 * object per store. Run the steps inside PgSearchStore.snapshot: each read is one statement on the
 * snapshot's connection.
 */
export function pgSearchReads(store: PgStore): SearchReads {
  let reads = pgSearch.get(store);
  if (!reads) {
    const { libraries, probe, terms, models } = store;
    reads = {
      ...pgVersionReads(store),
      catalogStamp: () => probe.catalogStamp(),
      libraries: () => libraries.list(),
      libraryWithVersions: (id) => libraries.withVersions(id),
      currentVersions: () => libraries.allCurrentVersions(),
      topVersions: (match, limit, perVersion) => probe.topVersions(match, limit, perVersion),
      versionScore: (versionId, match, limit) => probe.versionScore(versionId, match, limit),
      documentFrequencies: (list) => probe.documentFrequencies(list),
      modelsBuiltAt: (versionIds) => models.builtAtOf(versionIds),
      firstHeld: (versionIds, lists) => terms.firstHeld(versionIds, lists),
      termsStartingWith: (versionId, first, minLength, maxLength) => terms.termsStartingWith(versionId, first, minLength, maxLength),
    };
    pgSearch.set(store, reads);
  }
  return reads;
}

/**
 * pgSearchReads for one request: each version's row (its term-index key, its state, whether its
 * vectors are complete, where knn finds them, its model's time) read once however often the stages,
 * knn, the ranking model and the vectors header ask, which saves a round trip for each of them. Build one per read snapshot: the rows it remembers are that snapshot's.
 */
export function pgRequestReads(store: PgStore): SearchReads {
  const states = new Map<number, Promise<VersionState | null>>();
  const state = (versionId: number) => {
    let s = states.get(versionId);
    if (!s) states.set(versionId, (s = store.search.versionState(versionId)));
    return s;
  };
  /** Postings read ahead (prefetch), by version: the terms asked, and the rows of those the version holds. */
  const ahead = new Map<number, { asked: Set<string>; rows: Map<string, PostingRow[]> }>();
  const base = pgSearchReads(store);
  return {
    ...base,
    vectorsReady: async (versionId) => (await state(versionId))?.vectorsReady === true,
    versionKey: async (versionId) => {
      const s = await state(versionId);
      return s && { key: s.key, ready: s.ready };
    },
    modelBuiltAt: async (versionId) => (await state(versionId))?.row.modelBuiltAt ?? null,
    knn: async (versionId, query, k) => {
      const s = await state(versionId);
      return s ? store.search.knnOf(s.row, versionId, query, k) : [];
    },
    postings: async (versionId, list) => {
      const read = ahead.get(versionId);
      if (!read || !list.every((t) => read.asked.has(t))) return base.postings(versionId, list);
      const out = new Map<string, PostingRow[]>();
      for (const t of list) {
        const rows = read.rows.get(t);
        if (rows) out.set(t, rows);
      }
      return out;
    },
    prefetch: async (versionIds, terms) => {
      const missing = versionIds.filter((id) => !states.has(id));
      const rows = await store.search.versionStates(missing);
      for (const id of missing) states.set(id, Promise.resolve(rows.get(id) ?? null));
      const postings = await store.terms.postingsOfVersions(versionIds, terms);
      const asked = new Set(terms);
      for (const id of versionIds) ahead.set(id, { asked, rows: postings.get(id) ?? new Map() });
    },
  };
}
