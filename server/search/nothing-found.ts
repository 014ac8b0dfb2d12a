import type { Candidate } from './retrieve.ts';
import { hasSearchableTerm, type PreparedQuery } from './query.ts';
import { STOPWORDS } from './stopwords.ts';
import { searchableText } from './ranker.ts';
import { joinSeparated } from './text.ts';
import { isEnglishWord, type WordRarity } from './word-rarity.ts';
import { TUNING } from './tuning.ts';
import { runSync, wait, type Step } from './read-steps.ts';
import type { Awaitable } from '../store/version-reads.ts';

/**
 * The "nothing found" decision of a library-less search (the question names no library and none
 * was given). The probe always finds some library whose documents share a few words with a
 * question, also one about Django or sourdough; answering it with confident snippets misleads the
 * assistant that reads them. Two signals, each weighing a word by how rare it is in English (its
 * frequency rank in the builtin word table: "kubectl" and "eloquent" say more than "configure"):
 *
 * - unknown: the share of the question's word weight that no indexed document holds at all;
 * - coverage: the best share of it that one of the best-ranked snippets holds.
 *
 * They are combined linearly, z = bias + unknown x U + coverage x C, and the search answers
 * 404 no_documentation_found when z > 0 (TUNING.nothingFound: the constants and how they were fitted).
 */

export interface Answerability {
  unknown: number;
  coverage: number;
  z: number;
  nothingFound: boolean;
  /** Why nothing was found: no word to search for, or the words are not answered; null when answered. */
  reason: 'no-words' | 'not-answered' | null;
}

/** The content words the decision weighs: lower-case letters only, no stopwords, 3+ letters. */
export function contentWords(terms: string[]): string[] {
  return [...new Set(terms.filter((t) => /^[a-z]{3,}$/.test(t) && !STOPWORDS.has(t)))];
}

/**
 * Decides whether the ranked candidates answer the question at all. `indexed` tells which of the
 * words any indexed document holds.
 */
export function answerability(
  q: Pick<PreparedQuery, 'terms' | 'askedTerms' | 'language'>,
  ranked: Candidate[],
  indexed: (words: string[]) => Set<string>,
  rarity: WordRarity,
): Answerability {
  return runSync(answerabilityStep(q, ranked, indexed, rarity));
}

/** answerability with an `indexed` that may answer later (PostgreSQL's document frequencies). */
export function* answerabilityStep(
  q: Pick<PreparedQuery, 'terms' | 'askedTerms' | 'language'>,
  ranked: Candidate[],
  indexed: (words: string[]) => Awaitable<Set<string>>,
  rarity: WordRarity,
): Step<Answerability> {
  if (ranked.length === 0 || !hasSearchableTerm(q.terms)) {
    return { unknown: 0, coverage: 0, z: Infinity, nothingFound: true, reason: ranked.length === 0 ? 'not-answered' : 'no-words' };
  }
  const asked = contentWords(q.askedTerms);
  const coded = contentWords(q.terms).filter((w) => !asked.includes(w));
  const known = yield* wait(indexed([...asked, ...coded]));
  // Of pasted code, only the words some document holds (the APIs it calls): the asker's own names
  // (`createApp`, `warehouseId`) say nothing about whether the documents answer.
  // In another language, its own words (installiere, configurar) are neither English nor the
  // documents' and say nothing about them: only the words English or the documents know are weighed.
  const words = [...asked.filter((w) => !q.language || known.has(w) || isEnglishWord(rarity, w)), ...coded.filter((w) => known.has(w))];
  // Only codes, numbers or short names ("TS2345", "fs"): nothing to weigh, left to the ranking.
  if (words.length === 0) return { unknown: 0, coverage: 0, z: -Infinity, nothingFound: false, reason: null };
  const weights = words.map(rarity);
  const total = weights.reduce((a, b) => a + b, 0);
  let absent = 0;
  words.forEach((w, i) => {
    if (!known.has(w)) absent += weights[i]!;
  });
  let coverage = 0;
  for (const c of ranked.slice(0, TUNING.nothingFound.candidates)) {
    const text = searchableText(c);
    // A joined token (`cset` for `c.set`) is in the text only with its separators.
    const joined = joinSeparated(text);
    let held = 0;
    words.forEach((w, i) => {
      if (text.includes(w) || joined.includes(w)) held += weights[i]!;
    });
    coverage = Math.max(coverage, held / total);
  }
  const unknown = absent / total;
  const z = TUNING.nothingFound.bias + TUNING.nothingFound.unknown * unknown + TUNING.nothingFound.coverage * coverage;
  return { unknown, coverage, z, nothingFound: z > 0, reason: z > 0 ? 'not-answered' : null };
}
