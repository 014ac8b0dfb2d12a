import type { StoredSnippet } from '../../../lib/model.ts';
import { int8Unit } from '../../../lib/vector/quantize.ts';
import { blobOf, f32Of } from '../blobs.ts';
import { COLUMNS, installTextOf, toEmbedded, toSnippet, type Row, type SnippetRow, type SnippetStore } from '../snippets.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { tsvectorText } from './fts.ts';
import { noNul } from './text.ts';
import { named, pgQuery, withTransaction } from './transaction.ts';

/**
 * Rows per INSERT statement. One statement carries each column as one array parameter (`unnest`), so
 * a statement costs one round trip whatever its rows; 1,000 rows with 384-dimension embeddings are
 * about 3 MB, which keeps a statement's message and the server's memory for it modest.
 */
const INSERT_CHUNK = 1000;

/**
 * One statement inserts a chunk: each column an array, the rows taken in the order given. The
 * embeddings travel as one binary parameter, every row's vector at its offset and length (-1: none):
 * an array of bytea goes as hex text, which took more than half of the insert's time.
 */
const INSERT_SQL = `INSERT INTO snippets (version_id, kind, source_id, title, description, language, page_title, breadcrumb, content, code_list_json,
    tokens, content_hash, position, is_dynamic, source_file, embedding, fts)
  SELECT $1, u.kind, u.source_id, u.title, u.description, u.language, u.page_title, u.breadcrumb, u.content, u.code_list_json,
    u.tokens, u.content_hash, u.position, u.is_dynamic, u.source_file,
    CASE WHEN u.vlen < 0 THEN NULL ELSE substring($18::bytea FROM u.voff + 1 FOR u.vlen) END, u.fts::tsvector
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
    $11::int[], $12::text[], $13::int[], $14::int[], $15::text[], $16::int[], $17::int[], $19::text[])
    WITH ORDINALITY AS u(kind, source_id, title, description, language, page_title, breadcrumb, content, code_list_json,
      tokens, content_hash, position, is_dynamic, source_file, voff, vlen, fts, ord)
  ORDER BY u.ord
  RETURNING id`;

/**
 * Snippet rows on PostgreSQL, method for method SQLite's SnippetStore (server/store/snippets.ts).
 * A NUL in a snippet's text is stored as U+FFFD (text.ts: PostgreSQL's text cannot hold it).
 * Where SQLite writes a snippet's FTS5 row, the row's `fts` tsvector is written (fts.ts, migration
 * 002); where it writes the sqlite-vec row, a `snippet_vec` row with the same 8-bit bytes (vectors.ts).
 * The float embedding is kept in the row's `embedding` column as on SQLite. The bytea Buffers pg returns are read with the same
 * helpers as SQLite's blobs (blobs.ts copies one that is not aligned for a Float32Array).
 */
export class PgSnippetStore implements SameShape<SnippetStore> {
  constructor(private readonly pool: PgPool) {}

  /**
   * Inserts a batch in one transaction, a chunk of rows per statement; returns the new rows' ids in
   * order. With `vectorTable` (the embedder's table, PgVectorStore.table) the rows' 8-bit vectors are
   * stored too; `opts.fts: false` (a source-code partition) leaves `fts` NULL, as SQLite writes no FTS5 row.
   */
  async insertBatch(versionId: number, rows: SnippetRow[], vectorTable: string | null, opts: { fts?: boolean } = {}): Promise<number[]> {
    if (rows.length === 0) return [];
    const fts = opts.fts !== false;
    const vectors = vectorTable !== null && rows.some((r) => r.vector);
    if (rows.length <= INSERT_CHUNK && !vectors) return insertChunk(this.pool, versionId, rows, fts);
    return withTransaction(this.pool, async () => {
      const ids: number[] = [];
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        const chunk = rows.slice(i, i + INSERT_CHUNK);
        const chunkIds = await insertChunk(this.pool, versionId, chunk, fts);
        if (vectors) await insertVectors(this.pool, versionId, chunk, chunkIds);
        ids.push(...chunkIds);
      }
      return ids;
    });
  }

  /**
   * Replaces the full-text rows of stored snippets (when what is indexed of a snippet changed), in one
   * statement that also moves snippet_vocab's counts by the difference (its triggers see inserts and
   * deletes only). The last row given for an id wins, as SQLite's replace row by row leaves it.
   */
  async rewriteFts(_versionId: number, rows: { id: number; fts: SnippetRow['fts'] }[]): Promise<void> {
    if (rows.length === 0) return;
    const last = new Map(rows.map((r) => [r.id, tsvectorText(r.fts)]));
    await pgQuery(
      this.pool,
      `WITH u AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS u(id, fts)),
         before AS (SELECT s.version_id, l.lexeme, -1 AS d FROM snippets s JOIN u ON s.id = u.id CROSS JOIN LATERAL unnest(s.fts) AS l),
         after AS (UPDATE snippets s SET fts = u.fts::tsvector FROM u WHERE s.id = u.id RETURNING s.version_id, s.fts)
       INSERT INTO snippet_vocab (version_id, term, docs)
       SELECT version_id, lexeme, sum(d) FROM (SELECT * FROM before UNION ALL SELECT a.version_id, l.lexeme, 1 FROM after a CROSS JOIN LATERAL unnest(a.fts) AS l) x
       GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
       ON CONFLICT (version_id, term) DO UPDATE SET docs = snippet_vocab.docs + excluded.docs`,
      [[...last.keys()], [...last.values()]],
    );
  }

  async hashes(versionId: number): Promise<Set<string>> {
    const { rows } = await pgQuery<{ kind: string; content_hash: string }>(this.pool, 'SELECT kind, content_hash FROM snippets WHERE version_id = $1', [
      versionId,
    ]);
    return new Set(rows.map((r) => `${r.kind}:${r.content_hash}`));
  }

  async totals(versionId: number): Promise<{ tokens: number; snippets: number; maxPosition: number }> {
    // sum() and count() are BIGINT here (numbers through pool.ts), as SQLite's integers are.
    const { rows } = await pgQuery<{ tokens: number; snippets: number; maxPosition: number }>(
      this.pool,
      'SELECT coalesce(sum(tokens), 0)::bigint AS tokens, count(*) AS snippets, coalesce(max(position), -1) AS "maxPosition" FROM snippets WHERE version_id = $1',
      [versionId],
    );
    return rows[0];
  }

  /** The maps are filled in id order, the order SQLite's `id IN (...)` gives. */
  async withEmbeddings(ids: number[]): Promise<{ snippets: Map<number, StoredSnippet>; embeddings: Map<number, Float32Array> }> {
    const snippets = new Map<number, StoredSnippet>();
    const embeddings = new Map<number, Float32Array>();
    if (ids.length === 0) return { snippets, embeddings };
    const { rows } = await pgQuery<Row & { embedding: Buffer | null }>(
      this.pool,
      named(`SELECT ${COLUMNS}, embedding FROM snippets WHERE id = ANY($1::bigint[]) ORDER BY id`),
      [ids],
    );
    for (const r of rows) {
      snippets.set(r.id, toSnippet(r));
      if (r.embedding) embeddings.set(r.id, f32Of(r.embedding));
    }
    return { snippets, embeddings };
  }

  /** Ordered by source URL then id: SQLite walks its (version_id, source_id) index in that order. */
  async embeddedAt(versionId: number, sourceIds: string[]): Promise<{ snippet: StoredSnippet; embedding: Float32Array }[]> {
    const urls = [...new Set(sourceIds)];
    if (urls.length === 0) return [];
    const { rows } = await pgQuery<Row & { embedding: Buffer }>(
      this.pool,
      `SELECT ${COLUMNS}, embedding FROM snippets WHERE version_id = $1 AND embedding IS NOT NULL AND source_id = ANY($2::text[])
       ORDER BY source_id COLLATE "C", id`,
      [versionId, urls],
    );
    return rows.map(toEmbedded);
  }

  async embeddedPage(afterId: number, limit: number): Promise<{ snippet: StoredSnippet; embedding: Float32Array }[]> {
    const { rows } = await pgQuery<Row & { embedding: Buffer }>(
      this.pool,
      `SELECT ${COLUMNS}, embedding FROM snippets WHERE id > $1 AND embedding IS NOT NULL ORDER BY id LIMIT $2`,
      [afterId, limit],
    );
    return rows.map(toEmbedded);
  }

  async byIds(ids: number[]): Promise<StoredSnippet[]> {
    if (ids.length === 0) return [];
    const { rows } = await pgQuery<Row>(this.pool, named(`SELECT ${COLUMNS} FROM snippets WHERE id = ANY($1::bigint[])`), [ids]);
    const byId = new Map(rows.map((r) => [r.id, toSnippet(r)]));
    return ids.map((id) => byId.get(id)).filter((s): s is StoredSnippet => s !== undefined);
  }

  async headings(
    versionId: number,
    afterId: number,
    limit: number,
  ): Promise<{ id: number; sourceId: string; kind: 'code' | 'info'; title: string; breadcrumb: string }[]> {
    const { rows } = await pgQuery<{ id: number; sourceId: string; kind: 'code' | 'info'; title: string; breadcrumb: string }>(
      this.pool,
      'SELECT id, source_id AS "sourceId", kind, title, breadcrumb FROM snippets WHERE version_id = $1 AND id > $2 ORDER BY id LIMIT $3',
      [versionId, afterId, limit],
    );
    return rows;
  }

  /**
   * As SQLite's: ILIKE, because SQLite's LIKE ignores the case of ASCII letters ("NPM install" is
   * found there too); the patterns are ASCII, so ILIKE finds exactly what SQLite finds.
   */
  async installTexts(versionId: number, afterId: number, limit: number): Promise<{ id: number; kind: 'code' | 'info'; text: string }[]> {
    const { rows } = await pgQuery<{ id: number; kind: 'code' | 'info'; text: string }>(
      this.pool,
      `SELECT id, kind, text FROM (SELECT id, kind, CASE kind WHEN 'code' THEN code_list_json ELSE content END AS text FROM snippets WHERE version_id = $1 AND id > $2) t
       WHERE text ILIKE '%npm %' OR text ILIKE '%yarn %' OR text ILIKE '%bun %' OR text ILIKE '%deno add%' ORDER BY id LIMIT $3`,
      [versionId, afterId, limit],
    );
    return rows.map(installTextOf);
  }

  async allWithEmbeddings(versionId: number): Promise<{ snippet: StoredSnippet; embedding: Float32Array | null }[]> {
    const { rows } = await pgQuery<Row & { embedding: Buffer | null }>(
      this.pool,
      `SELECT ${COLUMNS}, embedding FROM snippets WHERE version_id = $1 ORDER BY id`,
      [versionId],
    );
    return rows.map((r) => ({ snippet: toSnippet(r), embedding: r.embedding ? f32Of(r.embedding) : null }));
  }

  async list(versionId: number, limit: number, afterId = 0): Promise<StoredSnippet[]> {
    const { rows } = await pgQuery<Row>(this.pool, `SELECT ${COLUMNS} FROM snippets WHERE version_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [
      versionId,
      afterId,
      limit,
    ]);
    return rows.map(toSnippet);
  }

  async countByKind(versionId: number): Promise<{ code: number; info: number }> {
    const { rows } = await pgQuery<{ kind: 'code' | 'info'; n: number }>(
      this.pool,
      'SELECT kind, count(*) AS n FROM snippets WHERE version_id = $1 GROUP BY kind',
      [versionId],
    );
    const out = { code: 0, info: 0 };
    for (const r of rows) out[r.kind] = r.n;
    return out;
  }
}

/**
 * Inserts up to INSERT_CHUNK rows in one statement; their ids in the order of `rows`. The rows are
 * inserted in that order (ORDER BY ord), so the identity gives them ascending ids; sorting what
 * RETURNING answers (whose order PostgreSQL does not promise) gives them back in the rows' order.
 */
async function insertChunk(pool: PgPool, versionId: number, rows: SnippetRow[], fts: boolean): Promise<number[]> {
  const col = <T>(f: (r: SnippetRow) => T): T[] => rows.map(f);
  const vectors = rows.map((r) => (r.vector ? blobOf(r.vector) : null));
  const offsets: number[] = [];
  let at = 0;
  for (const v of vectors) {
    offsets.push(at);
    at += v?.length ?? 0;
  }
  const { rows: out } = await pgQuery<{ id: number }>(pool, INSERT_SQL, [
    versionId,
    col((r) => r.kind),
    col((r) => noNul(r.sourceId)),
    col((r) => noNul(r.title)),
    col((r) => noNul(r.description)),
    col((r) => noNul(r.language)),
    col((r) => noNul(r.pageTitle)),
    col((r) => noNul(r.breadcrumb)),
    col((r) => noNul(r.content)),
    col((r) => (r.codeList ? JSON.stringify(r.codeList) : null)),
    col((r) => r.tokens),
    col((r) => noNul(r.contentHash)),
    col((r) => r.position),
    col((r) => (r.isDynamic ? 1 : 0)),
    col((r) => noNul(r.sourceFile)),
    offsets,
    vectors.map((v) => v?.length ?? -1),
    Buffer.concat(vectors.filter((v): v is Buffer => v !== null)),
    col((r) => (fts ? tsvectorText(r.fts) : null)),
  ]);
  return out.map((r) => r.id).sort((a, b) => a - b);
}

/** The 8-bit vectors of the rows that have one, as SQLite writes its sqlite-vec rows in insertBatch. */
async function insertVectors(pool: PgPool, versionId: number, rows: SnippetRow[], ids: number[]): Promise<void> {
  const withVector = rows.flatMap((r, k) => (r.vector ? [{ id: ids[k]!, bytes: int8Unit(r.vector) }] : []));
  if (withVector.length === 0) return;
  const lengths = withVector.map((v) => v.bytes.length);
  const offs: number[] = [];
  let at = 0;
  for (const n of lengths) {
    offs.push(at);
    at += n;
  }
  await pgQuery(
    pool,
    `INSERT INTO snippet_vec (snippet_id, version_id, embedding)
     SELECT u.id, $1, substring($5::bytea FROM u.off + 1 FOR u.len) FROM unnest($2::bigint[], $3::int[], $4::int[]) AS u(id, off, len)`,
    [versionId, withVector.map((v) => v.id), offs, lengths, Buffer.concat(withVector.map((v) => v.bytes))],
  );
}
