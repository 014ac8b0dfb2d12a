import type { PgMigration } from './migration.ts';

/**
 * A section's snippets are found by a range of source ids in byte order (`source_id COLLATE "C"`,
 * as SQLite compares text; PgSearchStore.sectionCode and the page's sections). An index serves a
 * range only in its own collation, and snippets_source's is the column's (the database's default),
 * so that range read every snippet of the version: ~5 ms of PostgreSQL per reranked context
 * answer at 5,000 snippets a version (npm run bench -- context --postgres debian --pg-statements),
 * 0.1 ms with this index. About 90 bytes per snippet.
 */
export const m006: PgMigration = {
  version: 6,
  name: 'section-ranges',
  sql: `CREATE INDEX snippets_source_bytes ON snippets (version_id, (source_id COLLATE "C"));`,
};
