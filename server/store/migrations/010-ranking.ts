import type { Migration } from './migration.ts';

/**
 * Learned ranking (server/search/ranker.ts, server/search/learn.ts):
 * - the term index gains each document's cosine norm (`term_chunks.norms`). The term index of
 *   every existing version is dropped here and rebuilt at the next start by the backfill
 *   (server/ingest/search-backfill.ts; about 95 s per million snippets), so no version serves
 *   without norms;
 * - `search_models` holds the ranking model learned from each version's own documents by the
 *   `search-model` job: one row per version, written in one statement (swapped in atomically) and
 *   deleted with its version.
 */
export const m010: Migration = {
  version: 10,
  name: 'ranking',
  up(db) {
    db.exec(`
      DELETE FROM term_postings;
      DELETE FROM term_chunks;
      UPDATE library_versions SET search_indexed = 0;
      ALTER TABLE term_chunks ADD COLUMN norms BLOB;
      CREATE TABLE search_models (
        version_id INTEGER PRIMARY KEY REFERENCES library_versions(id) ON DELETE CASCADE,
        format INTEGER NOT NULL,
        built_at TEXT NOT NULL,
        model TEXT NOT NULL
      );
    `);
  },
};
