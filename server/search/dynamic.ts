import type { Store } from '../store/index.ts';
import { sqliteVersionReads, type VersionReads } from '../store/version-reads.ts';
import type { PreparedQuery } from './query.ts';
import { runSync, type Step } from './read-steps.ts';
import { retrieveStep, type Candidate, type RetrieveOptions } from './retrieve.ts';
import { searchableText } from './ranker.ts';
import { TUNING } from './tuning.ts';

/**
 * The dynamic source-code index in retrieval (docs/git.md). A repository's docs version may point
 * at a partition holding snippets from its source (exported functions and classes with their doc
 * comments, module headers). When the documentation is thin for a question (few candidates, or
 * none of the best holds most of the question's words), that partition is searched too and its
 * candidates join the documentation's. They rank below documentation of equal relevance: their
 * scores are multiplied by TUNING.dynamic.penalty (here for the fused order, and by the ranker for
 * its probabilities). A version without a partition costs nothing: the check is on a field of the
 * version row every request already read. Its settings: TUNING.dynamic.
 */

/** True when the documentation's candidates do not answer the question well (then the source is searched). */
export function docsAreThin(q: PreparedQuery, candidates: Candidate[]): boolean {
  if (candidates.length < TUNING.dynamic.minCandidates) return true;
  const terms = [...new Set(q.terms.filter((t) => t.length > 2))];
  if (terms.length === 0) return false;
  let best = 0;
  for (const c of candidates.slice(0, TUNING.dynamic.head)) {
    const text = searchableText(c);
    best = Math.max(best, terms.filter((t) => text.includes(t)).length / terms.length);
  }
  return best < TUNING.dynamic.minCoverage;
}

/** The documentation's candidates, plus the source partition's when there is one and the documentation is thin. */
export function withDynamic(
  store: Store,
  q: PreparedQuery,
  docs: Candidate[],
  dynamicVersionId: number | null | undefined,
  opts: RetrieveOptions,
): Candidate[] {
  return runSync(withDynamicStep(sqliteVersionReads(store), q, docs, dynamicVersionId, opts));
}

/** withDynamic over either backend's reads (server/store/version-reads.ts). */
export function* withDynamicStep(
  reads: VersionReads,
  q: PreparedQuery,
  docs: Candidate[],
  dynamicVersionId: number | null | undefined,
  opts: RetrieveOptions,
): Step<Candidate[]> {
  if (!dynamicVersionId || !docsAreThin(q, docs)) return docs;
  const { dynamic } = TUNING;
  const limit = Math.min(dynamic.limit, opts.fetchLimit ?? dynamic.limit);
  const found = yield* retrieveStep(reads, dynamicVersionId, q, {
    ...opts,
    lexicalLimit: dynamic.lexicalLimit,
    vectorLimit: dynamic.vectorLimit,
    fetchLimit: limit,
  });
  return [...docs, ...found.map((c) => ({ ...c, fused: c.fused * dynamic.penalty, score: c.score * dynamic.penalty }))];
}
