import type Database from 'better-sqlite3';
import type { Db } from './db.ts';
import type { IndexChunk } from '../ingest/index-chunks.ts';

type Statement = Database.Statement<unknown[], unknown>;

export interface ChunkLengths {
  baseId: number;
  docs: number;
  tokens: number;
  lengths: Uint16Array;
}

export interface ChunkVectors {
  baseId: number;
  /** null: the chunk has no vectors for the current embedder (none configured, or a re-embed is running). */
  dims: number | null;
  data: Int8Array | null;
  norms: Float32Array | null;
}

export interface PostingRow {
  baseId: number;
  df: number;
  data: Uint16Array;
}

/** A Buffer's bytes as 16-bit values (copied when SQLite's buffer is not 2-byte aligned). */
function u16(buf: Buffer): Uint16Array {
  if (buf.byteOffset % 2 === 0) return new Uint16Array(buf.buffer, buf.byteOffset, buf.byteLength >> 1);
  return new Uint16Array(Uint8Array.from(buf).buffer);
}

function f32(buf: Buffer): Float32Array {
  if (buf.byteOffset % 4 === 0) return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength >> 2);
  return new Float32Array(Uint8Array.from(buf).buffer);
}

function bytes(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Each library version's index chunks: document lengths, 8-bit embeddings and per-term postings (migration 009). */
export class ChunkStore {
  private readonly stmts = new Map<string, Statement>();

  constructor(private readonly db: Db) {}

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /** Stores one chunk in one transaction. */
  writeChunk(versionId: number, chunk: IndexChunk): void {
    const posting = this.stmt('INSERT INTO term_postings (version_id, term, base_id, df, data) VALUES (?, ?, ?, ?, ?)');
    const v = chunk.vectors;
    this.db.transaction(() => {
      this.stmt('INSERT INTO index_chunks (version_id, base_id, last_id, docs, tokens, lengths, dims, vectors, norms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(versionId, chunk.baseId, chunk.lastId, chunk.docs, chunk.tokens, bytes(chunk.lengths), v?.dims ?? null, v ? bytes(v.data) : null, v ? bytes(v.norms) : null);
      for (const [term, p] of chunk.postings) posting.run(versionId, term, chunk.baseId, p.df, bytes(p.data));
    })();
  }

  /** The last snippet id of a version that is in its chunks (0 when none is). */
  indexedThrough(versionId: number): number {
    const r = this.stmt('SELECT max(last_id) AS last FROM index_chunks WHERE version_id = ?').get(versionId) as { last: number | null };
    return r.last ?? 0;
  }

  lengths(versionId: number): ChunkLengths[] {
    const rows = this.stmt('SELECT base_id, docs, tokens, lengths FROM index_chunks WHERE version_id = ? ORDER BY base_id').raw().all(versionId) as [number, number, number, Buffer][];
    return rows.map(([baseId, docs, tokens, lengths]) => ({ baseId, docs, tokens, lengths: u16(lengths) }));
  }

  vectors(versionId: number): ChunkVectors[] {
    const rows = this.stmt('SELECT base_id, dims, vectors, norms FROM index_chunks WHERE version_id = ? ORDER BY base_id').raw().all(versionId) as [number, number | null, Buffer | null, Buffer | null][];
    return rows.map(([baseId, dims, data, norms]) => ({
      baseId, dims, data: data ? new Int8Array(data.buffer, data.byteOffset, data.byteLength) : null, norms: norms ? f32(norms) : null,
    }));
  }

  /** Chunks without vectors, with their id range (to fill them from the vector table). */
  chunksWithoutVectors(): { versionId: number; baseId: number; lastId: number }[] {
    return (this.stmt('SELECT version_id, base_id, last_id FROM index_chunks WHERE dims IS NULL ORDER BY version_id, base_id').raw().all() as [number, number, number][])
      .map(([versionId, baseId, lastId]) => ({ versionId, baseId, lastId }));
  }

  setVectors(versionId: number, baseId: number, v: NonNullable<IndexChunk['vectors']>): void {
    this.stmt('UPDATE index_chunks SET dims = ?, vectors = ?, norms = ? WHERE version_id = ? AND base_id = ?').run(v.dims, bytes(v.data), bytes(v.norms), versionId, baseId);
  }

  postings(versionId: number, term: string): PostingRow[] {
    const rows = this.stmt('SELECT base_id, df, data FROM term_postings WHERE version_id = ? AND term = ?').raw().all(versionId, term) as [number, number, Buffer][];
    return rows.map(([baseId, df, data]) => ({ baseId, df, data: u16(data) }));
  }

  /** A key that changes when a version id is reused or its state changes; null for an unknown version. */
  versionKey(versionId: number): { key: string; ready: boolean } | null {
    const v = this.stmt('SELECT created_at, state FROM library_versions WHERE id = ?').get(versionId) as { created_at: string; state: string } | undefined;
    return v ? { key: `${versionId}@${v.created_at}`, ready: v.state === 'ready' } : null;
  }
}
