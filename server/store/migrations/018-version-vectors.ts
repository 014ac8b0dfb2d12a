import type { Migration } from './migration.ts';

/**
 * Which embedder completed each version's vectors (NULL: not yet). A search uses a version's
 * vectors only once all of them are there, so a version being embedded in the background answers
 * lexically instead of from half its vectors. Versions stored before are marked at startup
 * (VectorStore.markAllComplete), when the vector table exists.
 */
export const m018: Migration = {
  version: 18,
  name: 'version-vectors',
  up(db) {
    db.exec('ALTER TABLE library_versions ADD COLUMN vectors_embedder TEXT');
  },
};
