import type { Store } from '../store/index.ts';
import { sqliteVersionReads, type VersionReads } from '../store/version-reads.ts';
import type { PreparedQuery } from './query.ts';
import { retrieveStep, type Candidate, type RetrieveOptions } from './retrieve.ts';
import { runAsync, runSync, type Step } from './read-steps.ts';
import { DEFAULT_MODEL, rank, type RankingModel } from './ranker.ts';
import { modelStep } from './models.ts';
import { dedupe } from './dedupe.ts';
import { attachContextStep } from './neighbours.ts';
import { budgetFor, packAcross } from './budget.ts';
import { diversify } from './diversify.ts';
import { withDynamicStep } from './dynamic.ts';
import { TUNING } from './tuning.ts';

/**
 * The stages of an answer, defined once for both endpoints: candidates per version, then ranking
 * and shaping over whatever versions were retrieved. /api/v2/context runs them for its one version
 * (answerForVersion); /api/v3/search runs the first per library (on a worker or in the request
 * thread) and the rest on the merged list. docs/retrieval.md, "Ranking pipeline".
 */

/** One version to retrieve from, as the request thread resolved it. */
export interface VersionTarget {
  versionId: number;
  /** The libraryId its candidates carry: the library ID (with the tag, in a search that matched one). */
  libraryId: string;
  /** The version's source-code partition (LibraryVersion.dynamicVersionId): searched when the documentation is thin. */
  dynamicVersionId?: number | null;
}

/** How long each version's lists are and how many of their fused best are loaded. */
export type CandidateLimits = Pick<RetrieveOptions, 'lexicalLimit' | 'vectorLimit' | 'fetchLimit' | 'completeSimilarity'>;

/** What an answer is asked for besides its versions. */
export interface AnswerOptions {
  /** Skip the ranking model and the context pulled around hits (fused order only). */
  fast?: boolean;
  /** Load every candidate and return the whole shaped list, not packed (research mode takes its own share of it). */
  unpacked?: boolean;
}

/**
 * The candidate limits of one answer: one library loads the head of its fused list the ranking
 * model scores (TUNING.fetch; fast mode fewer, without similarities), so both endpoints rank the
 * same candidates; several libraries shorter lists and fewer each (TUNING.multi: the global
 * ranking's cost grows with every candidate).
 */
export function candidateLimits(libraries: number, opts: AnswerOptions = {}): CandidateLimits {
  // The fused order that fast mode serves reads no similarity.
  const similarity = opts.fast ? { completeSimilarity: false } : {};
  if (opts.unpacked) return similarity;
  if (opts.fast) return { ...similarity, fetchLimit: TUNING.fetch.fast };
  if (libraries > 1) return { lexicalLimit: TUNING.multi.listLimit, vectorLimit: TUNING.multi.listLimit, fetchLimit: TUNING.multi.perLibrary };
  return { fetchLimit: TUNING.fetch.rerank };
}

/**
 * Stage 1, per version: BM25 and KNN lists fused (retrieve.ts), with the source partition's candidates
 * when the documentation is thin (dynamic.ts). On SQLite, in one synchronous call (inside the caller's
 * read transaction).
 */
export function versionCandidates(store: Store, q: PreparedQuery, target: VersionTarget, limits: CandidateLimits): Candidate[] {
  return runSync(versionCandidatesStep(sqliteVersionReads(store), q, target, limits));
}

/**
 * Stage 1 over reads that may be asynchronous (PostgreSQL's: server/store/pg/version-reads.ts), with
 * the same candidates as versionCandidates for the same rows. Run it inside the backend's read snapshot.
 */
export function versionCandidatesAsync(reads: VersionReads, q: PreparedQuery, target: VersionTarget, limits: CandidateLimits): Promise<Candidate[]> {
  return runAsync(versionCandidatesStep(reads, q, target, limits));
}

export function* versionCandidatesStep(reads: VersionReads, q: PreparedQuery, target: VersionTarget, limits: CandidateLimits): Step<Candidate[]> {
  const opts = { libraryId: target.libraryId, ...limits };
  const docs = yield* retrieveStep(reads, target.versionId, q, opts);
  return yield* withDynamicStep(reads, q, docs, target.dynamicVersionId, opts);
}

/** Stage 2: each candidate's probability of answering from its own version's model (ranker.ts); fast: the fused order. */
export function rankCandidates(store: Store, q: PreparedQuery, candidates: Candidate[], fast = false): Candidate[] {
  return runSync(rankStep(sqliteVersionReads(store), q, candidates, fast));
}

/** rankCandidates over reads that may be asynchronous (see versionCandidatesAsync). */
export function rankCandidatesAsync(reads: VersionReads, q: PreparedQuery, candidates: Candidate[], fast = false): Promise<Candidate[]> {
  return runAsync(rankStep(reads, q, candidates, fast));
}

/** The models of the candidates' versions are read first, in the order rank() meets them, then ranking reads nothing. */
export function* rankStep(reads: VersionReads, q: PreparedQuery, candidates: Candidate[], fast: boolean): Step<Candidate[]> {
  if (fast) return rank(q, candidates, { fast: true });
  const models = new Map<number, RankingModel>();
  for (const c of candidates) {
    const v = c.snippet.versionId;
    if (!models.has(v)) models.set(v, yield* modelStep(reads, v));
  }
  return rank(q, candidates, { modelOf: (v) => models.get(v) ?? DEFAULT_MODEL });
}

/** How the ranked list of the libraries answered for (their candidates' libraryId) becomes the answer. */
export interface ShapeOptions extends AnswerOptions {
  labels: string[];
  /** A failing context step is reported here and the list served without context; unset, the failure fails the answer. */
  onContextError?: (err: Error) => void;
}

/**
 * Stages 3 and 4: duplicates dropped, a section's further snippets decayed, context pulled in
 * around the best hits (unless fast), and the token budget with its weak-tail cut, every library
 * answered for keeping its best snippet. Across libraries only the head of the ranked list that
 * can reach the answer is deduplicated (dedupe compares each kept snippet with the next one);
 * one library's list is kept whole, as the context around hits looks at what it holds.
 */
export function shapeAnswer(store: Store, ranked: Candidate[], opts: ShapeOptions): Candidate[] {
  return runSync(shapeStep(sqliteVersionReads(store), ranked, opts));
}

/** shapeAnswer over reads that may be asynchronous (see versionCandidatesAsync). */
export function shapeAnswerAsync(reads: VersionReads, ranked: Candidate[], opts: ShapeOptions): Promise<Candidate[]> {
  return runAsync(shapeStep(reads, ranked, opts));
}

export function* shapeStep(reads: VersionReads, ranked: Candidate[], opts: ShapeOptions): Step<Candidate[]> {
  const budget = budgetFor(opts.labels.length);
  const head = opts.labels.length > 1 ? ranked.slice(0, budget.maxSnippets * TUNING.multi.dedupeHead) : ranked;
  let list = diversify(dedupe(head));
  if (!opts.fast) list = yield* withContext(reads, list, opts.onContextError);
  return opts.unpacked ? list : packAcross(list, opts.labels, budget);
}

function* withContext(reads: VersionReads, list: Candidate[], onError: ((err: Error) => void) | undefined): Step<Candidate[]> {
  if (!onError) return yield* attachContextStep(reads, list);
  try {
    return yield* attachContextStep(reads, list);
  } catch (err) {
    onError(err as Error);
    return list;
  }
}

/** The whole pipeline for one library version (/api/v2/context, research mode's sub-queries, the retrieval workers). */
export function answerForVersion(store: Store, q: PreparedQuery, target: VersionTarget, opts: AnswerOptions = {}): Candidate[] {
  return runSync(answerStep(sqliteVersionReads(store), q, target, opts));
}

/** answerForVersion over reads that may be asynchronous (see versionCandidatesAsync). */
export function answerForVersionAsync(reads: VersionReads, q: PreparedQuery, target: VersionTarget, opts: AnswerOptions = {}): Promise<Candidate[]> {
  return runAsync(answerStep(reads, q, target, opts));
}

export function* answerStep(reads: VersionReads, q: PreparedQuery, target: VersionTarget, opts: AnswerOptions): Step<Candidate[]> {
  const candidates = yield* versionCandidatesStep(reads, q, target, candidateLimits(1, opts));
  const ranked = yield* rankStep(reads, q, candidates, opts.fast ?? false);
  return yield* shapeStep(reads, ranked, { ...opts, labels: [target.libraryId] });
}
