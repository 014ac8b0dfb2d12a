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
 * - `snippet_vocab`: how many snippets of each version hold each lexeme (SQLite's fts5vocab view),
 *   kept by statement triggers on snippets' inserts and deletes (PgSnippetStore.rewriteFts keeps it
 *   for its updates), so a document count is an index lookup: counting on the GIN index cost 150 ms
 *   for a word in every snippet of 200,000. Per version, so the builds of two nodes never update the
 *   same rows (one build writes one version), and a deleted version takes its counts with it.
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

CREATE TABLE snippet_vocab (
  version_id BIGINT NOT NULL REFERENCES library_versions(id) ON DELETE CASCADE,
  term TEXT NOT NULL,
  docs BIGINT NOT NULL,
  PRIMARY KEY (version_id, term)
);
CREATE INDEX snippet_vocab_term ON snippet_vocab (term);
CREATE FUNCTION snippet_vocab_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- In key order: a statement takes its rows' locks in one order.
  INSERT INTO snippet_vocab (version_id, term, docs)
  SELECT n.version_id, l.lexeme, count(*) FROM added n CROSS JOIN LATERAL unnest(n.fts) AS l WHERE n.fts IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (version_id, term) DO UPDATE SET docs = snippet_vocab.docs + excluded.docs;
  RETURN NULL;
END $$;
-- A count that reaches 0 stays (a lookup skips it) until its version is deleted: removing it in the
-- same statement would race a concurrent insert of the term.
CREATE FUNCTION snippet_vocab_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE snippet_vocab v SET docs = v.docs - d.n
  FROM (SELECT o.version_id, l.lexeme AS term, count(*) AS n FROM removed o CROSS JOIN LATERAL unnest(o.fts) AS l WHERE o.fts IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2) d
  WHERE v.version_id = d.version_id AND v.term = d.term;
  RETURN NULL;
END $$;
CREATE TRIGGER snippets_vocab_add AFTER INSERT ON snippets REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION snippet_vocab_add();
CREATE TRIGGER snippets_vocab_remove AFTER DELETE ON snippets REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION snippet_vocab_remove();

CREATE TABLE snippet_vec (
  snippet_id BIGINT PRIMARY KEY REFERENCES snippets(id) ON DELETE CASCADE,
  version_id BIGINT NOT NULL,
  embedding BYTEA NOT NULL
);
CREATE INDEX snippet_vec_version ON snippet_vec (version_id);
`,
};
