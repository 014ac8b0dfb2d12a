import { statementCache, type Db, type Statement } from './db.ts';
import { blobOf, f32Of, u16Of } from './blobs.ts';

/** One chunk of the term index: documents with ids in [baseId, baseId + 65535], their lengths and postings. */
export interface TermChunk {
  baseId: number;
  lastId: number;
  docs: number;
  /** Sum of the documents' lengths (tokens). */
  tokens: number;
  /** Length of each document by id offset (0 where no document has that id). */
  lengths: Uint16Array;
  /**
   * Euclidean norm of each document's vector of term weights 1 + ln(f) (f: weighted frequency), by id
   * offset: the length normalization of the cosine feature (server/search/bm25.ts LexicalScan). Built by server/ingest/term-chunks.ts.
   */
  norms: Float32Array;
  /** Per term: how many documents hold it, and (id offset, weighted frequency x 10) pairs in id order. */
  postings: Map<string, { df: number; data: Uint16Array }>;
}

export interface ChunkRow {
  baseId: number;
  docs: number;
  tokens: number;
  lengths: Uint16Array;
  /** Cosine norms by id offset (see TermChunk.norms). */
  norms: Float32Array;
}

export interface PostingRow {
  baseId: number;
  df: number;
  data: Uint16Array;
}

/** The term index of each library version: chunks of document lengths and per-term postings (migration 009). */
export class TermStore {
  private readonly stmt: (sql: string) => Statement;

  constructor(private readonly db: Db) {
    this.stmt = statementCache(db);
  }

  /** Stores one chunk in one transaction. */
  async writeChunk(versionId: number, chunk: TermChunk): Promise<void> {
    const posting = this.stmt('INSERT INTO term_postings (version_id, term, base_id, df, data) VALUES (?, ?, ?, ?, ?)');
    this.db.transaction(() => {
      this.stmt('INSERT INTO term_chunks (version_id, base_id, last_id, docs, tokens, lengths, norms) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
        versionId,
        chunk.baseId,
        chunk.lastId,
        chunk.docs,
        chunk.tokens,
        blobOf(chunk.lengths),
        blobOf(chunk.norms),
      );
      for (const [term, p] of chunk.postings) posting.run(versionId, term, chunk.baseId, p.df, blobOf(p.data));
    })();
  }

  /** The last snippet id of a version that is in its term index (0 when none is). */
  async indexedThrough(versionId: number): Promise<number> {
    const r = this.stmt('SELECT max(last_id) AS last FROM term_chunks WHERE version_id = ?').get(versionId) as { last: number | null };
    return r.last ?? 0;
  }

  chunks(versionId: number): ChunkRow[] {
    const rows = this.stmt('SELECT base_id, docs, tokens, lengths, norms FROM term_chunks WHERE version_id = ? ORDER BY base_id').raw().all(versionId) as [
      number,
      number,
      number,
      Buffer,
      Buffer,
    ][];
    return rows.map(([baseId, docs, tokens, lengths, norms]) => ({ baseId, docs, tokens, lengths: u16Of(lengths), norms: f32Of(norms) }));
  }

  /** For each list of terms, the first that any of the versions' term indexes holds at all, or null (asked in order, stopping there). */
  firstHeld(versionIds: number[], lists: string[][]): (string | null)[] {
    const one = this.stmt('SELECT 1 FROM term_postings WHERE version_id = ? AND term = ? LIMIT 1');
    return lists.map((terms) => terms.find((term) => versionIds.some((v) => one.get(v, term) !== undefined)) ?? null);
  }

  /** A version's terms that start with `first` (one character) and are minLength to maxLength long, with how many documents hold each. */
  termsStartingWith(versionId: number, first: string, minLength: number, maxLength: number): Map<string, number> {
    const next = String.fromCharCode(first.charCodeAt(0) + 1);
    const rows = this.stmt(
      'SELECT term, sum(df) FROM term_postings WHERE version_id = ? AND term >= ? AND term < ? AND length(term) BETWEEN ? AND ? GROUP BY term',
    )
      .raw()
      .all(versionId, first, next, minLength, maxLength) as [string, number][];
    return new Map(rows);
  }

  postings(versionId: number, term: string): PostingRow[] {
    const rows = this.stmt('SELECT base_id, df, data FROM term_postings WHERE version_id = ? AND term = ?').raw().all(versionId, term) as [
      number,
      number,
      Buffer,
    ][];
    return rows.map(([baseId, df, data]) => ({ baseId, df, data: u16Of(data) }));
  }

  /** A key that changes when a version id is reused or its state changes; null for an unknown version. */
  versionKey(versionId: number): { key: string; ready: boolean } | null {
    const v = this.stmt('SELECT created_at, state FROM library_versions WHERE id = ?').get(versionId) as { created_at: string; state: string } | undefined;
    return v ? { key: `${versionId}@${v.created_at}`, ready: v.state === 'ready' } : null;
  }

  async deleteVersion(versionId: number): Promise<void> {
    this.stmt('DELETE FROM term_postings WHERE version_id = ?').run(versionId);
    this.stmt('DELETE FROM term_chunks WHERE version_id = ?').run(versionId);
  }
}
