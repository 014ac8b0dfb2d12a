import type { InPlace } from '../../lib/vector/int8-l2.ts';

/** One sqlite-vec chunk of a version's partition, as stored: up to `size` slots. */
export interface VectorChunk {
  size: number;
  validity: Buffer;
  rowids: Buffer;
  vectors: Buffer;
  /** Set when `vectors` lie in a shared memory the kernel scans in place (server/search/shared-vectors.ts). */
  inPlace?: InPlace;
}

/**
 * Vector chunks shared between connections (the retrieval workers: server/search/shared-vectors.ts),
 * by a key that SearchStore reads inside its own read snapshot and that names one immutable
 * partition (SearchStore.sharedKey says why): equal keys mean the same vectors, whichever
 * connection loaded them, so no commit has to empty it.
 */
export interface SharedVectorChunks {
  get(key: string): VectorChunk[] | undefined;
  /** Keeps (and offers the other connections) chunks just loaded under key; returns the copies to scan. */
  put(key: string, chunks: VectorChunk[]): VectorChunk[];
}

/** Bytes a version's chunks take in memory. */
export function chunkBytes(chunks: VectorChunk[]): number {
  return chunks.reduce((n, c) => n + c.vectors.length + c.rowids.length + c.validity.length, 0);
}

/**
 * The vector chunks of recently searched library versions, kept in memory for one connection.
 * Reading a version's chunks out of SQLite (about 0.5 MB of blobs per 5,000 snippets) was a third
 * of a search's time at 1M snippets. Any commit empties it: `stamp` must change whenever the
 * database may have changed (another connection's commit shows in data_version, this
 * connection's own writes in total_changes), so nothing is ever served from a replaced version.
 * Least recently used versions leave first once `budgetBytes` is reached; 0 turns it off.
 */
export class VectorChunkCache {
  private readonly entries = new Map<number, { chunks: VectorChunk[]; bytes: number }>();
  private bytes = 0;
  private seen = '';

  constructor(private readonly budgetBytes: number) {}

  /** The chunks of a version: cached, or loaded (and kept when they fit). null (never kept) when the loader cannot read them. */
  get(versionId: number, stamp: string, load: () => VectorChunk[] | null): VectorChunk[] | null {
    if (this.budgetBytes <= 0) return load();
    if (stamp !== this.seen) this.clear(stamp);
    const hit = this.entries.get(versionId);
    if (hit) {
      // Map order is recency order: move it to the end.
      this.entries.delete(versionId);
      this.entries.set(versionId, hit);
      return hit.chunks;
    }
    const chunks = load();
    if (!chunks) return null;
    const bytes = chunkBytes(chunks);
    if (bytes > this.budgetBytes) return chunks;
    for (const [id, old] of this.entries) {
      if (this.bytes + bytes <= this.budgetBytes) break;
      this.entries.delete(id);
      this.bytes -= old.bytes;
    }
    this.entries.set(versionId, { chunks, bytes });
    this.bytes += bytes;
    return chunks;
  }

  /** Bytes held (what the tests check). */
  get heldBytes(): number {
    return this.bytes;
  }

  private clear(stamp: string): void {
    this.entries.clear();
    this.bytes = 0;
    this.seen = stamp;
  }
}
