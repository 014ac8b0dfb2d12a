import type { Migration } from './index.ts';

/**
 * Search data derived per library version when it is written:
 * - the term index, BM25 postings per version (see server/search/bm25.ts): snippets are indexed in
 *   chunks of consecutive ids; a chunk stores each document's length, and one postings row per term
 *   holds (id offset, weighted frequency) pairs;
 * - a copy of each snippet's embedding in its row, so the reranker reads the similarity of a
 *   candidate found only by BM25 with the row instead of a vec0 point lookup.
 * `search_indexed` marks versions whose derived data is complete; versions that existed before
 * this migration get it at the next start (server/ingest/search-backfill.ts).
 */
export const m009: Migration = {
  version: 9,
  name: 'search-index',
  up(db) {
    db.exec(`
      CREATE TABLE term_chunks (
        version_id INTEGER NOT NULL,
        base_id INTEGER NOT NULL,
        last_id INTEGER NOT NULL,
        docs INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        lengths BLOB NOT NULL,
        PRIMARY KEY (version_id, base_id)
      ) WITHOUT ROWID;
      CREATE TABLE term_postings (
        version_id INTEGER NOT NULL,
        term TEXT NOT NULL,
        base_id INTEGER NOT NULL,
        df INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (version_id, term, base_id)
      ) WITHOUT ROWID;
      ALTER TABLE library_versions ADD COLUMN search_indexed INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE snippets ADD COLUMN embedding BLOB;
    `);
  },
};
