import type { Store } from '../store/index.ts';
import type { VectorHit } from '../store/search.ts';

/** The cosine similarity of every snippet of a version to a query, from the 8-bit vectors of its index chunks. */
export interface VectorScan {
  /** The k most similar snippets, best first (distance = 1 - similarity, as the vector table reports it). */
  top(k: number): VectorHit[];
  /** Similarity of one snippet of the version; null when it has no vector. */
  similarity(id: number): number | null;
}

/**
 * Scans a version's 8-bit vectors (server/embed/quantize.ts) for a query: an exact scan of a few
 * thousand 100-dimensional vectors in a tight loop reads a quarter of the bytes of sqlite-vec's
 * float KNN on the version's partition and takes about half its time, and it yields the similarity
 * of every snippet, so the reranker needs no lookups for candidates found only by BM25.
 * Returns null (use the vector table) when a chunk has no vectors for this query's dimensions
 * (no embedder when it was written, or a re-embed job still running).
 */
export function scanVersion(store: Store, versionId: number, query: Float32Array): VectorScan | null {
  const chunks = store.chunks.vectors(versionId);
  if (chunks.length === 0) return null;
  const dims = query.length;
  for (const c of chunks) if (c.dims !== dims || !c.data || !c.norms) return null;
  let qNorm = 0;
  for (let i = 0; i < dims; i++) qNorm += query[i]! * query[i]!;
  qNorm = Math.sqrt(qNorm);
  const lo = chunks[0]!.baseId;
  const last = chunks[chunks.length - 1]!;
  const sims = new Float32Array(last.baseId + last.norms!.length - lo).fill(Number.NaN);
  for (const c of chunks) {
    const data = c.data!;
    const norms = c.norms!;
    const at = c.baseId - lo;
    for (let doc = 0, o = 0; doc < norms.length; doc++, o += dims) {
      const n = norms[doc]!;
      if (n === 0) continue;
      // Four accumulators: independent additions the CPU can overlap.
      let a = 0;
      let b = 0;
      let cc = 0;
      let d = 0;
      let j = 0;
      for (; j + 4 <= dims; j += 4) {
        a += query[j]! * data[o + j]!;
        b += query[j + 1]! * data[o + j + 1]!;
        cc += query[j + 2]! * data[o + j + 2]!;
        d += query[j + 3]! * data[o + j + 3]!;
      }
      for (; j < dims; j++) a += query[j]! * data[o + j]!;
      sims[at + doc] = qNorm === 0 ? 0 : (a + b + cc + d) / (qNorm * n);
    }
  }
  return {
    top(k: number): VectorHit[] {
      const best: VectorHit[] = [];
      for (let i = 0; i < sims.length; i++) {
        const s = sims[i]!;
        if (Number.isNaN(s)) continue;
        const distance = 1 - s;
        if (best.length === k && distance >= best[k - 1]!.distance) continue;
        if (best.length === k) best.pop();
        let j = best.length;
        while (j > 0 && best[j - 1]!.distance > distance) j--;
        best.splice(j, 0, { id: lo + i, distance });
      }
      return best;
    },
    similarity(id: number): number | null {
      const s = sims[id - lo];
      return s === undefined || Number.isNaN(s) ? null : s;
    },
  };
}
