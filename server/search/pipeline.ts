import type { Store } from '../store/index.ts';
import type { PreparedQuery } from './query.ts';
import { retrievePrepared, type Candidate } from './retrieve.ts';
import { rank } from './ranker.ts';
import { modelFor } from './models.ts';
import { dedupe } from './dedupe.ts';
import { attachContext } from './neighbours.ts';
import { pack } from './budget.ts';
import { diversify } from './diversify.ts';
import { withDynamic } from './dynamic.ts';
import { TUNING } from './tuning.ts';

export interface VersionAnswerOptions {
  libraryId: string;
  /** The version's dynamic source-code partition (LibraryVersion.dynamicVersionId): searched when the documentation is thin. */
  dynamicVersionId?: number | null;
  /** Skip the ranking model and the context pulled around hits (fused order only). */
  fast?: boolean;
  /** Token budget and snippet cap of the packed answer. */
  budget?: { tokens?: number; maxSnippets?: number };
  /** Skip packing: return the whole ranked list (evaluation, multi-library search packs globally itself). */
  unpacked?: boolean;
}

/**
 * The whole per-version pipeline used by /api/v2/context: candidates (BM25 + KNN, RRF), the
 * version's ranking model (unless fast), dedupe, context around the best hits (unless fast),
 * weak-tail cut and token budget.
 * The multi-library search runs the first steps per library and the rest globally.
 */
export function answerForVersion(store: Store, q: PreparedQuery, versionId: number, opts: VersionAnswerOptions): Candidate[] {
  const retrieveOpts = {
    libraryId: opts.libraryId, completeSimilarity: !opts.fast,
    // Only the head of the fused list is loaded and ranked (TUNING.fetch).
    fetchLimit: opts.unpacked ? undefined : opts.fast ? TUNING.fetch.fast : TUNING.fetch.rerank,
  };
  const candidates = withDynamic(store, q, retrievePrepared(store, versionId, q, retrieveOpts), opts.dynamicVersionId, retrieveOpts);
  const ranked = opts.fast ? rank(q, candidates, { fast: true }) : rank(q, candidates, { modelOf: () => modelFor(store, versionId) });
  let list = diversify(dedupe(ranked));
  if (!opts.fast) list = attachContext(store, list);
  return opts.unpacked ? list : pack(list, opts.budget);
}
