import type { Migration } from './migration.ts';

/**
 * A key's scope: `all` (what its member's role allows) or `read` (search, context and MCP only:
 * what an AI assistant's configuration should hold). Existing keys keep every right they had.
 */
export const m011: Migration = {
  version: 11,
  name: 'key-scope',
  up(db) {
    db.exec(`ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'all' CHECK (scope IN ('all', 'read'));`);
  },
};
