import type { Store } from '../store/index.ts';
import type { PreparedQuery } from './query.ts';
import { retrievePrepared, type Candidate } from './retrieve.ts';
import { rerank } from './rerank.ts';
import { dedupe } from './dedupe.ts';
import { attachContext } from './neighbours.ts';
import { pack } from './budget.ts';
import { diversify } from './diversify.ts';
import type { FUSION } from './retrieve.ts';
import type { RERANK_WEIGHTS } from './rerank.ts';

/** Candidates loaded in fast mode: enough for dedupe and a full 20-snippet answer. */
export const FAST_FETCH = 40;

export interface VersionAnswerOptions {
  libraryId: string;
  /** Skip the reranker and the context pulled around hits (fused order only). */
  fast?: boolean;
  /** Lists to use (evaluation switches them off one at a time). */
  lexical?: boolean;
  vector?: boolean;
  /** Token budget and snippet cap of the packed answer. */
  budget?: { tokens?: number; maxSnippets?: number };
  /** Tuning overrides (evaluation only). */
  fusion?: Partial<Record<keyof typeof FUSION, number>>;
  weights?: Partial<Record<keyof typeof RERANK_WEIGHTS, number>>;
  /** Skip packing: return the whole ranked list (evaluation, multi-library search packs globally itself). */
  unpacked?: boolean;
}

/**
 * The whole per-version pipeline used by /api/v2/context: candidates (BM25 + KNN, RRF),
 * rerank (unless fast), dedupe, context around the best hits (unless fast), token budget.
 * The multi-library search runs the first steps per library and the rest globally.
 */
export function answerForVersion(store: Store, q: PreparedQuery, versionId: number, opts: VersionAnswerOptions): Candidate[] {
  const candidates = retrievePrepared(store, versionId, q, {
    libraryId: opts.libraryId, lexical: opts.lexical, vector: opts.vector, completeSimilarity: !opts.fast, fusion: opts.fusion,
    // Without the reranker only the head of the fused list can reach the answer.
    fetchLimit: opts.fast && !opts.unpacked ? FAST_FETCH : undefined,
  });
  const ranked = rerank(q, candidates, { fast: opts.fast, weights: opts.weights });
  let list = diversify(dedupe(ranked));
  if (!opts.fast) list = attachContext(store, list);
  return opts.unpacked ? list : pack(list, opts.budget);
}
