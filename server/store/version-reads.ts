import type { Library, LibraryVersion, StoredSnippet } from '../../lib/model.ts';
import type { Store } from './index.ts';
import type { VersionProbe } from './search-probe.ts';
import type { StoredModel } from './search-models.ts';
import type { VectorHit } from './search.ts';
import type { ChunkRow, PostingRow } from './terms.ts';

import type { Awaitable } from './stores.ts';

export type { Awaitable };

/**
 * Everything the pipeline's stages read of library versions (server/search/pipeline.ts: a version's
 * candidates, their ranking by its model, the context pulled in around the best hits), in one small
 * interface, so that the stages are written once for both backends. SQLite's stores answer synchronously (sqliteVersionReads: the stage then runs in one
 * synchronous call, inside one read transaction); PostgreSQL's twins answer with promises
 * (pg/version-reads.ts). Reads that belong together are asked together (postings: every form of
 * every query term of a version at once), so that on PostgreSQL they cost one round trip.
 */
export interface VersionReads {
  /** Who per-backend caches of the stage belong to (bm25.ts keeps each version's statistics per owner). */
  readonly owner: object;
  vectorsReady(versionId: number): Awaitable<boolean>;
  knn(versionId: number, query: Float32Array, k: number): Awaitable<VectorHit[]>;
  versionKey(versionId: number): Awaitable<{ key: string; ready: boolean } | null>;
  chunks(versionId: number): Awaitable<ChunkRow[]>;
  /** Each term's postings rows in the version; a term the version does not hold maps to [] or is absent. */
  postings(versionId: number, terms: readonly string[]): Awaitable<Map<string, PostingRow[]>>;
  withEmbeddings(ids: number[]): Awaitable<{ snippets: Map<number, StoredSnippet>; embeddings: Map<number, Float32Array> }>;
  byIds(ids: number[]): Awaitable<StoredSnippet[]>;
  sectionCode(versionId: number, section: string): Awaitable<number | null>;
  /**
   * sectionCode of several sections at once, keyed by sectionKey: where each read is a round trip
   * (PostgreSQL's). SQLite's reads cost none and have no such method: the context step asks as it goes.
   */
  sectionCodes?(sections: readonly SectionRef[]): Promise<Map<string, number | null>>;
  page(versionId: number, pageUrl: string): Awaitable<number[]>;
  /** When the version's ranking model was stored (what parsed models are cached by), null without one. */
  modelBuiltAt(versionId: number): Awaitable<string | null>;
  model(versionId: number): Awaitable<StoredModel | null>;
}

/** A section of a version (`URL#anchor`), as sectionCodes asks for it. */
export interface SectionRef {
  versionId: number;
  section: string;
}

/** The key of a section in sectionCodes' answer. */
export function sectionKey(r: SectionRef): string {
  return `${r.versionId} ${r.section}`;
}

/** Reads answered at once: what a SQLite read transaction can run inside (no await can fall in it). */
type Synchronous<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Awaitable<infer R> ? (...args: A) => R : T[K];
};

/** The stages' reads, answered at once (SQLite). */
export type SyncVersionReads = Synchronous<VersionReads>;

const sqliteReads = new WeakMap<Store, SyncVersionReads>();

/** SQLite's stores as the stage's reads (one object per store, so bm25.ts's caches stay the store's). */
export function sqliteVersionReads(store: Store): SyncVersionReads {
  let reads = sqliteReads.get(store);
  if (!reads) {
    reads = {
      owner: store,
      vectorsReady: (versionId) => store.search.vectorsReady(versionId),
      knn: (versionId, query, k) => store.search.knn(versionId, query, k),
      versionKey: (versionId) => store.terms.versionKey(versionId),
      chunks: (versionId) => store.terms.chunks(versionId),
      postings: (versionId, terms) => {
        const out = new Map<string, PostingRow[]>();
        for (const t of terms) if (!out.has(t)) out.set(t, store.terms.postings(versionId, t));
        return out;
      },
      withEmbeddings: (ids) => store.snippets.withEmbeddings(ids),
      byIds: (ids) => store.snippets.byIds(ids),
      sectionCode: (versionId, section) => store.search.sectionCode(versionId, section),
      page: (versionId, pageUrl) => store.search.page(versionId, pageUrl),
      modelBuiltAt: (versionId) => store.models.builtAt(versionId),
      model: (versionId) => store.models.get(versionId),
    };
    sqliteReads.set(store, reads);
  }
  return reads;
}

/**
 * Everything else the search side reads to answer a request, besides its versions' stages: the
 * catalogue (server/search/catalog.ts), library lookups (resolving a libraryId), the probes that
 * choose libraries (select.ts), spelling's vocabulary (spelling.ts) and the vectors header. Written
 * once as steps over these reads: at once on SQLite, promises on PostgreSQL (pg/version-reads.ts).
 */
export interface SearchReads extends VersionReads {
  catalogStamp(): Awaitable<string>;
  libraries(): Awaitable<Library[]>;
  /** A library with its documentation versions, every state, by id (LibraryStore get and versions); null without the library. On PostgreSQL one round trip. */
  libraryWithVersions(id: string): Awaitable<{ library: Library; versions: LibraryVersion[] } | null>;
  /** Every current version (LibraryStore.allCurrentVersions). */
  currentVersions(): Awaitable<LibraryVersion[]>;
  topVersions(match: string, limit: number, perVersion: number): Awaitable<VersionProbe[]>;
  versionScore(versionId: number, match: string, limit: number): Awaitable<VersionProbe>;
  documentFrequencies(terms: string[]): Awaitable<Map<string, number>>;
  /** When each version's model was stored (VersionReads.modelBuiltAt for many versions at once); versions without one are absent. */
  modelsBuiltAt(versionIds: number[]): Awaitable<Map<number, string>>;
  firstHeld(versionIds: number[], lists: string[][]): Awaitable<(string | null)[]>;
  /**
   * Reads ahead what the per-version stages of a search of several versions ask first of each (the
   * version's row, the postings of `terms`): where each read is a round trip (PostgreSQL's), two
   * statements for all the versions instead of two per version. SQLite's reads cost none and have none.
   */
  prefetch?(versionIds: readonly number[], terms: readonly string[]): Promise<void>;
  termsStartingWith(versionId: number, first: string, minLength: number, maxLength: number): Awaitable<Map<string, number>>;
}

/** The same reads, answered at once (SQLite). */
export type SyncSearchReads = Synchronous<SearchReads>;

const sqliteSearch = new WeakMap<Store, SyncSearchReads>();

/** SQLite's stores as the search side's reads (one object per store, the same owner as sqliteVersionReads). */
export function sqliteSearchReads(store: Store): SyncSearchReads {
  let reads = sqliteSearch.get(store);
  if (!reads) {
    reads = {
      ...sqliteVersionReads(store),
      catalogStamp: () => store.probe.catalogStamp(),
      libraries: () => store.libraries.list(),
      libraryWithVersions: (id) => {
        const library = store.libraries.get(id);
        return library && { library, versions: store.libraries.versions(id) };
      },
      currentVersions: () => store.libraries.allCurrentVersions(),
      topVersions: (match, limit, perVersion) => store.probe.topVersions(match, limit, perVersion),
      versionScore: (versionId, match, limit) => store.probe.versionScore(versionId, match, limit),
      documentFrequencies: (terms) => store.probe.documentFrequencies(terms),
      modelsBuiltAt: (versionIds) => {
        const out = new Map<number, string>();
        for (const id of versionIds) {
          const at = store.models.builtAt(id);
          if (at !== null) out.set(id, at);
        }
        return out;
      },
      firstHeld: (versionIds, lists) => store.terms.firstHeld(versionIds, lists),
      termsStartingWith: (versionId, first, minLength, maxLength) => store.terms.termsStartingWith(versionId, first, minLength, maxLength),
    };
    sqliteSearch.set(store, reads);
  }
  return reads;
}
