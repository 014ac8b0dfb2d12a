import type { Migration } from './index.ts';

/**
 * Search data derived per library version when it is written (docs/retrieval.md, "The version index"):
 * snippets are indexed in chunks of consecutive ids. A chunk stores each document's length and its
 * embedding quantized to 8 bits (with the quantized vector's norm); one postings row per term and
 * chunk holds (id offset, weighted frequency) pairs. `search_indexed` marks versions whose chunks
 * are complete; versions that existed before this migration get them at the next start
 * (server/ingest/search-backfill.ts).
 */
export const m009: Migration = {
  version: 9,
  name: 'search-index',
  up(db) {
    db.exec(`
      CREATE TABLE index_chunks (
        version_id INTEGER NOT NULL,
        base_id INTEGER NOT NULL,
        last_id INTEGER NOT NULL,
        docs INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        lengths BLOB NOT NULL,
        dims INTEGER,
        vectors BLOB,
        norms BLOB,
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
    `);
  },
};
