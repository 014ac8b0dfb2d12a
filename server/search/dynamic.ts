import type { Store } from '../store/index.ts';
import type { PreparedQuery } from './query.ts';
import { retrievePrepared, type Candidate, type RetrieveOptions } from './retrieve.ts';
import { DYNAMIC_PENALTY, searchableText } from './ranker.ts';

/**
 * The dynamic source-code index in retrieval (docs/git.md). A repository's docs version may point
 * at a partition holding snippets from its source (exported functions and classes with their doc
 * comments, module headers). When the documentation is thin for a question (few candidates, or
 * none of the best holds most of the question's words), that partition is searched too and its
 * candidates join the documentation's. They rank below documentation of equal relevance: their
 * scores are multiplied by DYNAMIC.penalty (here for the fused order, and by the ranker for its
 * probabilities). A version without a partition costs nothing: the check is on a field of the
 * version row every request already read.
 */
export const DYNAMIC = {
  /** Score factor of a source-code candidate against documentation. */
  penalty: DYNAMIC_PENALTY,
  /** Documentation is thin when fewer candidates than this came back... */
  minCandidates: 3,
  /** ...or when the best of its first `head` candidates holds less than this share of the question's terms. */
  minCoverage: 0.75,
  head: 3,
  /** Source-code candidates loaded per question. */
  limit: 10,
} as const;

/** True when the documentation's candidates do not answer the question well (then the source is searched). */
export function docsAreThin(q: PreparedQuery, candidates: Candidate[]): boolean {
  if (candidates.length < DYNAMIC.minCandidates) return true;
  const terms = [...new Set(q.terms.filter((t) => t.length > 2))];
  if (terms.length === 0) return false;
  let best = 0;
  for (const c of candidates.slice(0, DYNAMIC.head)) {
    const text = searchableText(c);
    best = Math.max(best, terms.filter((t) => text.includes(t)).length / terms.length);
  }
  return best < DYNAMIC.minCoverage;
}

/** The documentation's candidates, plus the source partition's when there is one and the documentation is thin. */
export function withDynamic(store: Store, q: PreparedQuery, docs: Candidate[], dynamicVersionId: number | null | undefined, opts: RetrieveOptions): Candidate[] {
  if (!dynamicVersionId || !docsAreThin(q, docs)) return docs;
  const limit = Math.min(DYNAMIC.limit, opts.fetchLimit ?? DYNAMIC.limit);
  const found = retrievePrepared(store, dynamicVersionId, q, { ...opts, lexicalLimit: 20, vectorLimit: 20, fetchLimit: limit });
  return [...docs, ...found.map((c) => ({ ...c, fused: c.fused * DYNAMIC.penalty, score: c.score * DYNAMIC.penalty }))];
}
