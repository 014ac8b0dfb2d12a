import type { Store } from '../store/index.ts';
import type { Awaitable } from '../store/version-reads.ts';
import { pgVersionReads } from '../store/pg/version-reads.ts';
import type { PgSearchModelStore } from '../store/pg/search-models.ts';
import type { PgSearchStore } from '../store/pg/search.ts';
import type { PgSnippetStore } from '../store/pg/snippets.ts';
import type { PgTermStore } from '../store/pg/terms.ts';
import type { PreparedQuery } from './query.ts';
import { retrievePrepared, retrieveStep, type Candidate, type RetrieveOptions } from './retrieve.ts';
import { runAsync } from './read-steps.ts';

/** What learning reads of a snippet for its heading questions (learn.ts HeadingRow, with the id it pages by). */
export interface HeadingPageRow {
  id: number;
  sourceId: string;
  kind: 'code' | 'info';
  title: string;
  breadcrumb: string;
}

/**
 * Everything learning a version's ranking model (learn.ts) reads, for either backend: its headings
 * and install texts a page at a time, and one heading question's candidates, retrieved in one read
 * snapshot through the same stage as a real question (retrieve.ts retrieveStep).
 */
export interface LearnSource {
  headings(versionId: number, afterId: number, limit: number): Awaitable<HeadingPageRow[]>;
  installTexts(versionId: number, afterId: number, limit: number): Awaitable<{ id: number; kind: 'code' | 'info'; text: string }[]>;
  candidates(versionId: number, q: PreparedQuery, opts: RetrieveOptions): Awaitable<Candidate[]>;
}

/** SQLite's store: every read at once, each question inside one read transaction. */
export function sqliteLearnSource(store: Store): LearnSource {
  return {
    headings: (versionId, afterId, limit) => store.snippets.headings(versionId, afterId, limit),
    installTexts: (versionId, afterId, limit) => store.snippets.installTexts(versionId, afterId, limit),
    candidates: (versionId, q, opts) => store.search.snapshot(() => retrievePrepared(store, versionId, q, opts)),
  };
}

/** PostgreSQL's twins: each question's reads awaited inside one REPEATABLE READ snapshot (PgSearchStore.snapshot). */
export function pgLearnSource(stores: { search: PgSearchStore; terms: PgTermStore; snippets: PgSnippetStore; models: PgSearchModelStore }): LearnSource {
  const reads = pgVersionReads(stores);
  return {
    headings: (versionId, afterId, limit) => stores.snippets.headings(versionId, afterId, limit),
    installTexts: (versionId, afterId, limit) => stores.snippets.installTexts(versionId, afterId, limit),
    candidates: (versionId, q, opts) => stores.search.snapshot(() => runAsync(retrieveStep(reads, versionId, q, opts))),
  };
}
