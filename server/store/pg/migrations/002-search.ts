import type { PgMigration } from './migration.ts';

/**
 * The search side's tables, none of which needs an extension, so the same database works on any
 * PostgreSQL 15+ server, with or without pgvector:
 * - `snippets.fts`: each snippet's full-text row (SQLite's FTS5 table snippet_fts), a weighted
 *   tsvector the node builds from the same column texts (server/store/pg/fts.ts), with a GIN index.
 *   Labels: title A, breadcrumb B, description C, code and content D; FTS5 ranks with bm25() at
 *   equal column weights (no `rank` is configured), so the probes pass equal weights too, and the
 *   labels only keep which column a word came from. The scope column is not needed: a probe of one
 *   version filters on version_id. Its storage is MAIN (compressed in the row, moved out only when
 *   nothing else can be): every probe reads it for each matching row, and when the row's large texts
 *   pushed it out of line into TOAST, a probe on the fixture corpus read five times the pages.
 * - `snippet_vec`: each snippet's 8-bit embedding (lib/vector/quantize.ts), the bytes sqlite-vec
 *   holds, deleted with its snippet. Its dimension follows the embedder, so the pgvector column for
 *   nearest neighbours (halfvec, HNSW) is added at run time by PgVectorStore.ensure when the server
 *   has pgvector, and rebuilt from these bytes: never by a migration.
 */
export const m002: PgMigration = {
  version: 2,
  name: 'search',
  sql: `
ALTER TABLE snippets ADD COLUMN fts tsvector;
ALTER TABLE snippets ALTER COLUMN fts SET STORAGE MAIN;
CREATE INDEX snippets_fts ON snippets USING gin (fts);

CREATE TABLE snippet_vec (
  snippet_id BIGINT PRIMARY KEY REFERENCES snippets(id) ON DELETE CASCADE,
  version_id BIGINT NOT NULL,
  embedding BYTEA NOT NULL
);
CREATE INDEX snippet_vec_version ON snippet_vec (version_id);
`,
};
