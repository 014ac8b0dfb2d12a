import type { Migration } from './migration.ts';

/**
 * A read-only view of the full-text index's vocabulary (fts5vocab, one row per term with the
 * number of snippets holding it). Library-less search uses it to keep only a question's
 * distinctive words when it probes the whole index for the libraries the question is about.
 */
export const m004: Migration = {
  version: 4,
  name: 'search-vocab',
  up(db) {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS snippet_fts_vocab USING fts5vocab(snippet_fts, 'row');`);
  },
};
