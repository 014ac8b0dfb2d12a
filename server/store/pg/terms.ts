import { blobOf, f32Of, u16Of } from '../blobs.ts';
import type { ChunkRow, PostingRow, TermChunk, TermStore } from '../terms.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { named, pgQuery, withTransaction } from './transaction.ts';

/**
 * The term index on PostgreSQL, method for method SQLite's TermStore (server/store/terms.ts): the
 * same tables (migration 001) with the same bytes, so BM25 in the node (server/search/bm25.ts)
 * reads the same postings and ranks exactly as on SQLite.
 */
export class PgTermStore implements SameShape<TermStore> {
  constructor(private readonly pool: PgPool) {}

  /**
   * Stores one chunk in one transaction. The postings go as one statement (each column an array):
   * a chunk holds thousands of terms, and a statement per term would cost a round trip each.
   */
  async writeChunk(versionId: number, chunk: TermChunk): Promise<void> {
    await withTransaction(this.pool, async () => {
      await pgQuery(this.pool, 'INSERT INTO term_chunks (version_id, base_id, last_id, docs, tokens, lengths, norms) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        versionId,
        chunk.baseId,
        chunk.lastId,
        chunk.docs,
        chunk.tokens,
        blobOf(chunk.lengths),
        blobOf(chunk.norms),
      ]);
      if (chunk.postings.size === 0) return;
      const terms: string[] = [];
      const dfs: number[] = [];
      const offsets: number[] = [];
      const lengths: number[] = [];
      const blobs: Buffer[] = [];
      let at = 0;
      for (const [term, p] of chunk.postings) {
        const b = blobOf(p.data);
        terms.push(term);
        dfs.push(p.df);
        offsets.push(at);
        lengths.push(b.length);
        blobs.push(b);
        at += b.length;
      }
      // The postings' bytes travel as one binary parameter cut by offset (an array of bytea would go as hex text).
      await pgQuery(
        this.pool,
        `INSERT INTO term_postings (version_id, term, base_id, df, data)
         SELECT $1, u.term, $2, u.df, substring($7::bytea FROM u.off + 1 FOR u.len)
         FROM unnest($3::text[], $4::int[], $5::int[], $6::int[]) AS u(term, df, off, len)`,
        [versionId, chunk.baseId, terms, dfs, offsets, lengths, Buffer.concat(blobs)],
      );
    });
  }

  async indexedThrough(versionId: number): Promise<number> {
    const { rows } = await pgQuery<{ last: number | null }>(this.pool, 'SELECT max(last_id) AS last FROM term_chunks WHERE version_id = $1', [versionId]);
    return rows[0].last ?? 0;
  }

  async chunks(versionId: number): Promise<ChunkRow[]> {
    const { rows } = await pgQuery<{ base_id: number; docs: number; tokens: number; lengths: Buffer; norms: Buffer }>(
      this.pool,
      named('SELECT base_id, docs, tokens, lengths, norms FROM term_chunks WHERE version_id = $1 ORDER BY base_id'),
      [versionId],
    );
    return rows.map((r) => ({ baseId: r.base_id, docs: r.docs, tokens: r.tokens, lengths: u16Of(r.lengths), norms: f32Of(r.norms) }));
  }

  /** For each list of terms, the first that any of the versions holds, or null: one statement for all the lists. */
  async firstHeld(versionIds: number[], lists: string[][]): Promise<(string | null)[]> {
    const terms = [...new Set(lists.flat())];
    if (versionIds.length === 0 || terms.length === 0) return lists.map(() => null);
    const { rows } = await pgQuery<{ term: string }>(
      this.pool,
      named('SELECT DISTINCT term FROM term_postings WHERE version_id = ANY($1::bigint[]) AND term = ANY($2::text[])'),
      [versionIds, terms],
    );
    const held = new Set(rows.map((r) => r.term));
    return lists.map((list) => list.find((term) => held.has(term)) ?? null);
  }

  /**
   * The range compares in byte order (COLLATE "C"), as SQLite's text comparison does; length() counts
   * characters on both. The terms of the index are lower-case letters and digits.
   */
  async termsStartingWith(versionId: number, first: string, minLength: number, maxLength: number): Promise<Map<string, number>> {
    const next = String.fromCharCode(first.charCodeAt(0) + 1);
    const { rows } = await pgQuery<{ term: string; n: number }>(
      this.pool,
      named(`SELECT term, sum(df)::bigint AS n FROM term_postings
       WHERE version_id = $1 AND term COLLATE "C" >= $2 AND term COLLATE "C" < $3 AND length(term) BETWEEN $4 AND $5 GROUP BY term`),
      [versionId, first, next, minLength, maxLength],
    );
    return new Map(rows.map((r) => [r.term, r.n]));
  }

  async postings(versionId: number, term: string): Promise<PostingRow[]> {
    const { rows } = await pgQuery<{ base_id: number; df: number; data: Buffer }>(
      this.pool,
      named('SELECT base_id, df, data FROM term_postings WHERE version_id = $1 AND term = $2 ORDER BY base_id'),
      [versionId, term],
    );
    return rows.map((r) => ({ baseId: r.base_id, df: r.df, data: u16Of(r.data) }));
  }

  /**
   * The postings of several terms of one version in one statement (the per-version retrieval stage
   * asks for every form of every query term at once: a statement per term would cost a round trip
   * each). By term, rows in base_id order as postings() gives them; a term without rows is absent.
   */
  async postingsOf(versionId: number, terms: readonly string[]): Promise<Map<string, PostingRow[]>> {
    return (await this.postingsOfVersions([versionId], terms)).get(versionId) ?? new Map();
  }

  /** postingsOf for several versions in one statement (a search of several libraries): by version, then as postingsOf. */
  async postingsOfVersions(versionIds: readonly number[], terms: readonly string[]): Promise<Map<number, Map<string, PostingRow[]>>> {
    const out = new Map<number, Map<string, PostingRow[]>>();
    if (terms.length === 0 || versionIds.length === 0) return out;
    const { rows } = await pgQuery<{ version_id: number; term: string; base_id: number; df: number; data: Buffer }>(
      this.pool,
      named(
        'SELECT version_id, term, base_id, df, data FROM term_postings WHERE version_id = ANY($1::bigint[]) AND term = ANY($2::text[]) ORDER BY version_id, term, base_id',
      ),
      [[...new Set(versionIds)], [...new Set(terms)]],
    );
    for (const r of rows) {
      let version = out.get(r.version_id);
      if (!version) out.set(r.version_id, (version = new Map()));
      let list = version.get(r.term);
      if (!list) version.set(r.term, (list = []));
      list.push({ baseId: r.base_id, df: r.df, data: u16Of(r.data) });
    }
    return out;
  }

  async versionKey(versionId: number): Promise<{ key: string; ready: boolean } | null> {
    const { rows } = await pgQuery<{ created_at: string; state: string }>(this.pool, named('SELECT created_at, state FROM library_versions WHERE id = $1'), [
      versionId,
    ]);
    const v = rows[0];
    return v ? { key: `${versionId}@${v.created_at}`, ready: v.state === 'ready' } : null;
  }

  async deleteVersion(versionId: number): Promise<void> {
    await pgQuery(this.pool, 'DELETE FROM term_postings WHERE version_id = $1', [versionId]);
    await pgQuery(this.pool, 'DELETE FROM term_chunks WHERE version_id = $1', [versionId]);
  }
}
