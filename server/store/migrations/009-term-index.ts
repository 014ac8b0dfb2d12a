import type { Migration } from './index.ts';

/**
 * The term index: BM25 postings per library version (see server/search/bm25.ts). Snippets are
 * indexed in chunks of consecutive ids; a chunk stores each document's length, and one postings
 * row per term holds (id offset, weighted frequency) pairs. `terms_indexed` marks versions whose
 * index is complete; versions that existed before this migration are indexed at the next start.
 */
export const m009: Migration = {
  version: 9,
  name: 'term-index',
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
      ALTER TABLE library_versions ADD COLUMN terms_indexed INTEGER NOT NULL DEFAULT 0;
    `);
  },
};
