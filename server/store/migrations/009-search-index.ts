import type { Migration } from './migration.ts';

/**
 * Search data derived per library version when it is written:
 * - the term index, BM25 postings per version (see server/search/bm25.ts): snippets are indexed in
 *   chunks of consecutive ids; a chunk stores each document's length, and one postings row per term
 *   holds (id offset, weighted frequency) pairs. `search_indexed` marks versions whose term index is
 *   complete; versions that existed before this migration get it at the next start
 *   (server/ingest/search-backfill.ts);
 * - a float32 copy of each snippet's embedding in its row: sqlite-vec holds 8-bit vectors for KNN,
 *   and the exact similarities of the candidates come from these copies (server/search/retrieve.ts).
 *   The re-embed job that the new vector table format starts writes them for older versions.
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
