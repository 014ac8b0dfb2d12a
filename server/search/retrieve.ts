import type { Store } from '../store/index.ts';
import type { StoredSnippet } from '../../lib/model.ts';
import type { VectorHit } from '../store/search.ts';
import type { PreparedQuery } from './query.ts';
import { sqliteVersionReads, type VersionReads } from '../store/version-reads.ts';
import { lexicalScanStep, type LexicalScan } from './bm25.ts';
import { runSync, wait, type Step } from './read-steps.ts';
import { approxCosineDistance, cosineDistance } from '../../lib/vector/quantize.ts';
import { TUNING } from './tuning.ts';

/** One snippet considered for an answer, with the evidence the rankers use. */
export interface Candidate {
  snippet: StoredSnippet;
  /** Library the snippet belongs to (set by the caller; the search across libraries shows it). */
  libraryId: string;
  /** -bm25 (larger is better), null when not among the lexical candidates. */
  bm25: number | null;
  /** bm25 divided by the best bm25 of this version's list, in [0, 1] (also for candidates only the vector list found). */
  lexical: number;
  /** The length-normalized lexical score (bm25.ts lexicalScan), 0 when no query term occurs. */
  cosine: number;
  /** Cosine similarity to the question (1 - distance), null without vectors. */
  similarity: number | null;
  lexicalRank: number | null;
  vectorRank: number | null;
  /** RRF score of the fused lists. */
  fused: number;
  /** Current ranking score: fused, replaced by the reranker's score when it runs. */
  score: number;
  /**
   * Set on context pulled in around the hit before it (neighbours.ts): its section's code or prose,
   * its parent section, or a section it links to.
   */
  via?: 'sibling' | 'parent' | 'link';
  /** Reranker features, kept for explanation and tests. */
  features?: Record<string, number>;
}

export interface RetrieveOptions {
  libraryId?: string;
  lexicalLimit?: number;
  vectorLimit?: number;
  /** Load only the best this many fused candidates (fast mode needs no features of the tail). */
  fetchLimit?: number;
  /** Give the loaded candidates their exact similarity from their float copies (default true; the reranker uses it). */
  completeSimilarity?: boolean;
}

/**
 * Lexical + vector candidates of one library version for a question prepared once (prepareQuery,
 * embedded) and reused across versions, fused with weighted RRF (TUNING.fusion), best first. A
 * question without an embedding has no vector list, one without terms no lexical list.
 */
export function retrievePrepared(store: Store, versionId: number, q: PreparedQuery, opts: RetrieveOptions = {}): Candidate[] {
  return runSync(retrieveStep(sqliteVersionReads(store), versionId, q, opts));
}

/**
 * retrievePrepared over either backend's reads (server/store/version-reads.ts). The generator only
 * reads; the fusion and the candidates are computed by plain functions (fuse, candidatesOf), whose
 * locals do not live in a generator's frame.
 */
export function* retrieveStep(reads: VersionReads, versionId: number, q: PreparedQuery, opts: RetrieveOptions = {}): Step<Candidate[]> {
  // A version whose vectors the embed job has not completed answers lexically, never from part of them.
  const useVec = q.vector !== null && (yield* wait(reads.vectorsReady(versionId)));
  const knn = useVec && q.vector ? yield* wait(reads.knn(versionId, q.vector, opts.vectorLimit ?? TUNING.fusion.vectorLimit)) : [];
  // The lexical pass also scores the vector list's neighbours, so every candidate has complete lexical features.
  const scan = yield* lexicalScanStep(
    reads,
    versionId,
    q.termForms,
    opts.lexicalLimit ?? TUNING.fusion.lexicalLimit,
    knn.map((h) => h.id),
  );
  // Without a fetch limit every candidate is loaded, rows and float embeddings in one query, and
  // the neighbours are ordered by exact cosine. With one, they are fused in the order and with the
  // approximate distances of their 8-bit vectors, and the candidates loaded get exact ones (candidatesOf).
  const early =
    useVec && opts.fetchLimit === undefined ? yield* wait(reads.withEmbeddings([...new Set([...scan.top.map((h) => h.id), ...knn.map((h) => h.id)])])) : null;
  const plan = fuse(q, opts, knn, scan, early);
  if (!plan) return [];
  // Only the candidates loaded need their similarity (the fused order does not use it), from their float copies.
  const complete = useVec && q.vector !== null && opts.completeSimilarity !== false;
  const loaded =
    early ??
    (complete
      ? yield* wait(reads.withEmbeddings(plan.ids))
      : { snippets: new Map((yield* wait(reads.byIds(plan.ids))).map((x) => [x.id, x])), embeddings: new Map<number, Float32Array>() });
  return candidatesOf(q, opts, plan, loaded, complete);
}

interface Fused {
  bm25: number | null;
  cosine: number;
  lexicalRank: number | null;
  distance: number | null;
  vectorRank: number | null;
  fused: number;
}

/** What fusion decided: each candidate's evidence, the ids to load (best fused first when cut), the best bm25. */
interface FusionPlan {
  byId: Map<number, Fused>;
  ids: number[];
  best: number;
}

type Loaded = { snippets: Map<number, StoredSnippet>; embeddings: Map<number, Float32Array> };

/** The lexical and vector lists fused with weighted RRF (TUNING.fusion); null when neither found anything. */
function fuse(q: PreparedQuery, opts: RetrieveOptions, knn: VectorHit[], scan: LexicalScan, loaded: Loaded | null): FusionPlan | null {
  const lex = scan.top;
  const vec = !q.vector
    ? []
    : loaded
      ? exactOrder(knn, loaded.embeddings, q.vector)
      : knn.map((h) => ({ id: h.id, distance: approxCosineDistance(h.distance) }));
  const byId = new Map<number, Fused>();
  const entry = (id: number) => {
    let e = byId.get(id);
    if (!e) {
      const other = scan.others.get(id);
      byId.set(id, (e = { bm25: other?.score ?? null, cosine: other?.cosine ?? 0, lexicalRank: null, distance: null, vectorRank: null, fused: 0 }));
    }
    return e;
  };
  lex.forEach((h, i) => {
    const e = entry(h.id);
    e.bm25 = h.score;
    e.cosine = h.cosine;
    e.lexicalRank = i + 1;
    e.fused += TUNING.fusion.lexicalWeight / (TUNING.fusion.rrfK + i + 1);
  });
  const lexIds = new Set(lex.map((h) => h.id));
  vec.forEach((h, i) => {
    if (!lexIds.has(h.id) && 1 - h.distance < TUNING.fusion.minVectorOnlySimilarity) return;
    const e = entry(h.id);
    e.distance = h.distance;
    e.vectorRank = i + 1;
    e.fused += TUNING.fusion.vectorWeight / (TUNING.fusion.rrfK + i + 1);
  });
  if (byId.size === 0) return null;

  const best = lex.length ? Math.max(lex[0]!.score, 1e-9) : 1;
  let ids = [...byId.keys()];
  if (opts.fetchLimit !== undefined && ids.length > opts.fetchLimit) {
    ids = ids.sort((a, b) => byId.get(b)!.fused - byId.get(a)!.fused || a - b).slice(0, opts.fetchLimit);
  }
  return { byId, ids, best };
}

/** The loaded candidates, with their exact similarities when `complete`, best fused first. */
function candidatesOf(q: PreparedQuery, opts: RetrieveOptions, plan: FusionPlan, loaded: Loaded, complete: boolean): Candidate[] {
  const { byId, ids, best } = plan;
  if (complete) {
    for (const id of ids) {
      const v = loaded.embeddings.get(id);
      if (v && v.length === q.vector!.length) byId.get(id)!.distance = cosineDistance(q.vector!, v);
    }
  }
  const snippets = ids.map((id) => loaded.snippets.get(id)).filter((x): x is StoredSnippet => x !== undefined);
  const out: Candidate[] = snippets.map((snippet) => {
    const e = byId.get(snippet.id)!;
    return {
      snippet,
      libraryId: opts.libraryId ?? '',
      bm25: e.bm25,
      lexical: e.bm25 === null ? 0 : Math.min(1, Math.max(0, e.bm25) / best),
      cosine: e.cosine,
      similarity: e.distance === null ? null : 1 - e.distance,
      lexicalRank: e.lexicalRank,
      vectorRank: e.vectorRank,
      fused: e.fused,
      score: e.fused,
    };
  });
  return out.sort(byScore);
}

/**
 * The KNN's neighbours (found on the 8-bit vectors) with their exact cosine distances from the
 * float copies, nearest first; a neighbour without a copy (a re-embed job running) is left out.
 */
function exactOrder(hits: VectorHit[], copies: Map<number, Float32Array>, query: Float32Array): VectorHit[] {
  const out: VectorHit[] = [];
  for (const h of hits) {
    const v = copies.get(h.id);
    if (v && v.length === query.length) out.push({ id: h.id, distance: cosineDistance(query, v) });
  }
  return out.sort((a, b) => a.distance - b.distance || a.id - b.id);
}

export function byScore(a: Candidate, b: Candidate): number {
  return b.score - a.score || a.snippet.id - b.snippet.id;
}
