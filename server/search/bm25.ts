import type { Store } from '../store/index.ts';
import type { LexicalHit } from '../store/search.ts';
import type { PostingRow } from '../store/terms.ts';
import { sqliteVersionReads, type VersionReads } from '../store/version-reads.ts';
import { runSync, wait, type Step } from './read-steps.ts';
import { TUNING } from './tuning.ts';

/** A term's weight in a document's cosine vector, from its stored weighted frequency (x 10); the term index stores each document's norm of these. */
export function termWeight(stored: number): number {
  return stored < WEIGHTS.length ? WEIGHTS[stored]! : 1 + Math.log(stored / 10);
}

/** termWeight of the common stored frequencies, computed once (the lexical scan reads one per posting). */
const WEIGHTS = Float64Array.from({ length: 4096 }, (_, f) => (f > 0 ? 1 + Math.log(f / 10) : 0));

/** A served version's document statistics, loaded once (a ready version never changes). */
interface VersionStats {
  docs: number;
  /** Id span of the version's documents. */
  lo: number;
  hi: number;
  /** k1 * (1 - b + b * length / average length) of each document, by id - lo. */
  norm: Float32Array;
  /** 1 / cosine norm of each document (0 where none), by id - lo. */
  inverseNorm: Float32Array;
}

/** Per-store cache of version statistics (each worker thread has its own store), by VersionReads.owner. */
const statsCache = new WeakMap<object, Map<string, VersionStats>>();
const MAX_CACHED_VERSIONS = 2000;

function* versionStats(reads: VersionReads, versionId: number): Step<VersionStats | null> {
  const v = yield* wait(reads.versionKey(versionId));
  if (!v) return null;
  let cache = statsCache.get(reads.owner);
  if (!cache) statsCache.set(reads.owner, (cache = new Map()));
  const cached = cache.get(v.key);
  if (cached) return cached;
  const chunks = yield* wait(reads.chunks(versionId));
  if (chunks.length === 0) return null;
  let docs = 0;
  let tokens = 0;
  for (const c of chunks) {
    docs += c.docs;
    tokens += c.tokens;
  }
  const lo = chunks[0]!.baseId;
  const last = chunks[chunks.length - 1]!;
  const hi = last.baseId + last.lengths.length - 1;
  const avg = tokens / docs;
  const norm = new Float32Array(hi - lo + 1);
  const inverseNorm = new Float32Array(hi - lo + 1);
  for (const c of chunks) {
    const at = c.baseId - lo;
    for (let i = 0; i < c.lengths.length; i++) {
      norm[at + i] = TUNING.bm25.k1 * (1 - TUNING.bm25.b + (TUNING.bm25.b * c.lengths[i]!) / avg);
      const n = c.norms[i] ?? 0;
      inverseNorm[at + i] = n > 0 ? 1 / n : 0;
    }
  }
  const stats = { docs, lo, hi, norm, inverseNorm };
  if (v.ready) {
    if (cache.size >= MAX_CACHED_VERSIONS) cache.delete(cache.keys().next().value!);
    cache.set(v.key, stats);
  }
  return stats;
}

/** Scores accumulate in buffers per thread, indexed by id - lo; `touched` lists the entries to read and reset. */
let scores = new Float64Array(1 << 14);
let cosines = new Float64Array(1 << 14);
let touched = new Int32Array(1 << 14);
/** Marks, by id - lo, the snippets holding a form of the term being counted (unionDf). */
let seen = new Uint8Array(1 << 14);
let seenDocs = new Int32Array(1 << 14);

/** A lexical candidate: its BM25 score and its cosine score (both larger is better). */
export interface LexicalScore extends LexicalHit {
  cosine: number;
}

export interface LexicalScan {
  /** The `limit` best snippets by BM25, best first; ties by id. */
  top: LexicalScore[];
  /** BM25 and cosine of the other snippets asked for (`extra`) that hold any term; absent: no term. */
  others: Map<number, { score: number; cosine: number }>;
}

/**
 * Scores one version's snippets for a query's terms. BM25 with per-version statistics:
 * score = sum over terms of idf(t) * f * (k1 + 1) / (f + norm(doc)), with f the column-weighted
 * frequency of the term in the snippet and idf = ln((N - df + 0.5) / (df + 0.5)) (at least 1e-6),
 * as FTS5's bm25() computes it, but with N, df and the average length of this version rather than
 * of the whole index, and without FTS5's per-query pass over every library. The same pass gives a
 * cosine score, sum over terms of idf(t)^2 * (1 + ln f) / |doc|, whose length normalization favours
 * short, focused snippets where BM25 saturates (a second view the ranker weighs).
 * `terms` lists each query term as its exact index tokens (the word and its inflected forms,
 * query.ts wordForms). The forms of a term share one idf, from the number of snippets holding any
 * of them: with an idf of its own, a rare form (`burrows`) would outweigh the word itself and lift
 * whichever snippets happen to use it (in a small library, above the section that answers). Each
 * form still adds its own frequency term, so a snippet using several forms of a word counts it
 * more (summing the frequencies instead lost one to two points of hit@1 on the dev split of test/eval).
 */
export function lexicalScan(store: Store, versionId: number, terms: readonly (readonly string[])[], limit: number, extra: Iterable<number> = []): LexicalScan {
  return runSync(lexicalScanStep(sqliteVersionReads(store), versionId, terms, limit, extra));
}

/** lexicalScan over either backend's reads (server/store/version-reads.ts): the version's statistics and all its postings are read first, then scored at once. */
export function* lexicalScanStep(
  reads: VersionReads,
  versionId: number,
  terms: readonly (readonly string[])[],
  limit: number,
  extra: Iterable<number> = [],
): Step<LexicalScan> {
  const empty: LexicalScan = { top: [], others: new Map() };
  if (terms.length === 0) return empty;
  const stats = yield* versionStats(reads, versionId);
  if (!stats) return empty;
  const postings = yield* wait(reads.postings(versionId, terms.flat()));
  return score(stats, terms, postings, limit, extra);
}

/** The scan's arithmetic over the postings read: no read left, so the scores buffers are used and reset without a pause. */
function score(
  stats: VersionStats,
  terms: readonly (readonly string[])[],
  postings: Map<string, PostingRow[]>,
  limit: number,
  extra: Iterable<number>,
): LexicalScan {
  const span = stats.hi - stats.lo + 1;
  if (scores.length < span) {
    scores = new Float64Array(span);
    cosines = new Float64Array(span);
    touched = new Int32Array(span);
    seen = new Uint8Array(span);
    seenDocs = new Int32Array(span);
  }
  let nTouched = 0;
  const { k1 } = TUNING.bm25;
  for (const forms of terms) {
    const lists = forms.map((t) => postings.get(t) ?? []).filter((rows) => rows.length > 0);
    if (lists.length === 0) continue;
    const df = lists.length === 1 ? lists[0]!.reduce((n, r) => n + r.df, 0) : unionDf(lists, stats.lo);
    let idf = Math.log((stats.docs - df + 0.5) / (df + 0.5));
    if (idf <= 0) idf = 1e-6;
    const weight = idf * (k1 + 1);
    const idf2 = idf * idf;
    for (const rows of lists) {
      for (const r of rows) {
        const at = r.baseId - stats.lo;
        const data = r.data;
        for (let i = 0; i < data.length; i += 2) {
          const doc = at + data[i]!;
          const f = data[i + 1]! / 10;
          if (scores[doc] === 0) touched[nTouched++] = doc;
          scores[doc] += (weight * f) / (f + stats.norm[doc]!);
          cosines[doc] += idf2 * termWeight(data[i + 1]!) * stats.inverseNorm[doc]!;
        }
      }
    }
  }
  const others = new Map<number, { score: number; cosine: number }>();
  for (const id of extra) {
    const doc = id - stats.lo;
    if (doc >= 0 && doc < span && scores[doc]! > 0) others.set(id, { score: scores[doc]!, cosine: cosines[doc]! });
  }
  // Keep the best `limit` in a small array sorted best first; reset the buffers on the way.
  const best: LexicalScore[] = [];
  for (let i = 0; i < nTouched; i++) {
    const doc = touched[i]!;
    const score = scores[doc]!;
    const cosine = cosines[doc]!;
    scores[doc] = 0;
    cosines[doc] = 0;
    if (limit <= 0) continue;
    const id = stats.lo + doc;
    if (best.length === limit) {
      const worst = best[limit - 1]!;
      if (score < worst.score || (score === worst.score && id > worst.id)) continue;
      best.pop();
    }
    let j = best.length;
    while (j > 0 && (best[j - 1]!.score < score || (best[j - 1]!.score === score && best[j - 1]!.id > id))) j--;
    best.splice(j, 0, { id, score, cosine });
  }
  for (const h of best) others.delete(h.id);
  return { top: best, others };
}

/** How many snippets hold any of the forms (each counted once). */
function unionDf(lists: PostingRow[][], lo: number): number {
  let n = 0;
  for (const rows of lists) {
    for (const r of rows) {
      const at = r.baseId - lo;
      for (let i = 0; i < r.data.length; i += 2) {
        const doc = at + r.data[i]!;
        if (seen[doc] === 0) {
          seen[doc] = 1;
          seenDocs[n++] = doc;
        }
      }
    }
  }
  for (let k = 0; k < n; k++) seen[seenDocs[k]!] = 0;
  return n;
}

/** The `limit` best snippets of one version for a query's terms by BM25 (see lexicalScan). Best first; ties by id. */
export function lexicalTop(store: Store, versionId: number, terms: readonly (readonly string[])[], limit: number): LexicalHit[] {
  return lexicalScan(store, versionId, terms, limit).top.map(({ id, score }) => ({ id, score }));
}
