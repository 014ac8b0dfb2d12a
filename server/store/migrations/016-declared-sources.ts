import type { Migration } from './migration.ts';

/**
 * The sources declared in <dataDir>/sources.yaml as last reconciled: the entry (its options, a
 * fingerprint of what indexing depends on, its schedule) per library, and whether the reconcile
 * created that library. Only libraries it created are deleted when the file drops them; a library
 * that existed before it was declared is only let go.
 */
export const m016: Migration = {
  version: 16,
  name: 'declared-sources',
  up(db) {
    db.exec(`
      CREATE TABLE declared_sources (
        library_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        spec_json TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        schedule TEXT,
        created INTEGER NOT NULL CHECK (created IN (0, 1)),
        job_id INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `);
  },
};
