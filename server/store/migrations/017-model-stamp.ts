import type { Migration } from './migration.ts';

/**
 * An index on when each version's ranking model was stored: the catalogue stamp reads its latest
 * time on every search (a stored model may give a library package names, server/search/catalog.ts),
 * and without the index that would scan every model.
 */
export const m017: Migration = {
  version: 17,
  name: 'model-stamp',
  up(db) {
    db.exec('CREATE INDEX search_models_built_at ON search_models (built_at)');
  },
};
