import { analyzeQuery, wordForms, type PreparedQuery } from './query.ts';
import { STOPWORDS } from './stopwords.ts';
import { editDistance } from './names.ts';
import { isEnglishWord, type WordRarity } from './word-rarity.ts';
import { TUNING } from './tuning.ts';
import { runSync, wait, type Step } from './read-steps.ts';
import type { Awaitable } from '../store/version-reads.ts';

/**
 * Spelling: a question word that no searched version holds is read as the word they hold instead,
 * so a misspelling does not lose the word that mattered most: its American spelling (`behaviour`
 * -> `behavior`), or, for a word that is not English (`serilaizer`, `redcat`), the closest word
 * (`serializer`, `redact`). The vocabulary is the versions' own term index; the builtin word table
 * tells a typo from a word the documents happen not to use (`refuse`, `stripe`, `hangs` stay).
 */

/** The term index as spelling reads it (server/store/terms.ts): at once on SQLite, promises on PostgreSQL (then run the steps). */
export interface Vocabulary {
  /** For each list of terms, the first that any of the versions holds, or null (one read for all the words of a question). */
  firstHeld(versionIds: number[], lists: string[][]): Awaitable<(string | null)[]>;
  termsStartingWith(versionId: number, first: string, minLength: number, maxLength: number): Awaitable<Map<string, number>>;
}

/** A vocabulary that answers at once (SQLite's term index, a test's). */
export type SyncVocabulary = {
  firstHeld(versionIds: number[], lists: string[][]): (string | null)[];
  termsStartingWith(versionId: number, first: string, minLength: number, maxLength: number): Map<string, number>;
};

export interface Correction {
  from: string;
  to: string;
}

/**
 * Typos allowed in a word (TUNING.spelling). The first letter is taken as typed (the vocabulary is
 * read by it).
 */
function typoBudget(length: number): number {
  return length < TUNING.spelling.oneTypoFrom ? 0 : length < TUNING.spelling.twoTyposFrom ? 1 : 2;
}

/**
 * A word written on its own in the question, or as the member of a dotted identifier
 * (`fastify.regsiter`, `z.stirng()`); not inside a longer name (`customSerilaizer`, `--flag`).
 */
function standalone(word: string): RegExp {
  return new RegExp(`(?:(?<![\\w$.@/-])|(?<=[\\w$]\\.))${word}(?![\\w$])`, 'gi');
}

/** A word as prose writes it: lower case, or capitalized; not an identifier (`startsAt`, `FormData`). */
const PROSE_WORD = /^[A-Za-z][a-z]*$/;

/**
 * Whether `word` (lower-case ASCII letters) stands in `text` as `standalone` matches it and is
 * written as PROSE_WORD. Scanned by hand rather than with standalone's expression: the question's
 * words differ from request to request, and compiling a case-insensitive expression for each was
 * most of what spelling cost a request (its ASCII letters match ASCII letters only, as here).
 */
export function writtenAsWord(word: string, text: string): boolean {
  const n = word.length;
  for (let at = 0; at + n <= text.length; at++) {
    if (!sameLetters(text, at, word)) continue;
    const before = at > 0 ? text.charCodeAt(at - 1) : -1;
    const boundary = !(isWordChar(before) || before === DOT || before === AT || before === SLASH || before === DASH);
    const member = before === DOT && at > 1 && isWordChar(text.charCodeAt(at - 2));
    if (!(boundary || member) || (at + n < text.length && isWordChar(text.charCodeAt(at + n)))) continue;
    // PROSE_WORD: the first letter in either case, the others lower case.
    let prose = true;
    for (let i = 1; i < n && prose; i++) prose = text.charCodeAt(at + i) === word.charCodeAt(i);
    if (prose) return true;
  }
  return false;
}

const DOT = 46;
const AT = 64;
const SLASH = 47;
const DASH = 45;

/** [\w$] as the expressions without the u flag read it: ASCII letters, digits, _ and $. */
function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

/** text at `at` spells `word` (lower-case ASCII letters) in either case. */
function sameLetters(text: string, at: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = text.charCodeAt(at + i);
    const w = word.charCodeAt(i);
    if (c !== w && c !== w - 32) return false;
  }
  return true;
}

/** British endings and their American spellings, which documentation mostly uses (behaviour, customise, catalogue, cancelled, licence). */
const AMERICAN: [RegExp, string][] = [
  [/our(s|ed|ing|ite|ites|able|ably)?$/, 'or$1'],
  [/is(e|es|ed|ing|ation|ations|er|ers)$/, 'iz$1'],
  [/ys(e|es|ed|ing|er|ers)$/, 'yz$1'],
  [/tre(s)?$/, 'ter$1'],
  [/ogue(s)?$/, 'og$1'],
  [/ell(ed|ing|er|ers)$/, 'el$1'],
  [/^(lic|def|off|pret)ence(s)?$/, '$1ense$2'],
];

/**
 * The American spellings of a British word (none for most words; 6+ letters only, so `hours` stays
 * `hours`). A spelling that is no word (`promize` for `promise`) is held by no version: never used.
 */
function americanSpellings(word: string): string[] {
  if (word.length < 6) return [];
  return [...new Set(AMERICAN.map(([from, to]) => word.replace(from, to)).filter((w) => w !== word))];
}

/**
 * The words of a question no version holds, each with the word the versions hold instead: its
 * American spelling, or for a word English does not know, the closest one (fewest edits, then most documents).
 */
export function spellingCorrections(q: PreparedQuery, vocabulary: SyncVocabulary, rarity: WordRarity, versionIds: number[]): Correction[] {
  return runSync(spellingCorrectionsStep(q, vocabulary, rarity, versionIds));
}

/** A word of the question spelling looks up: the forms the lexical scan reads it as, its American spellings, whether English knows it. */
interface Suspect {
  word: string;
  budget: number;
  forms: string[];
  americans: string[];
  maybeTypo: boolean;
}

/** spellingCorrections over either backend's vocabulary. */
export function* spellingCorrectionsStep(q: PreparedQuery, vocabulary: Vocabulary, rarity: WordRarity, versionIds: number[]): Step<Correction[]> {
  const suspects: Suspect[] = [];
  for (const word of q.terms) {
    const budget = typoBudget(word.length);
    if (budget === 0 || !/^[a-z]+$/.test(word) || STOPWORDS.has(word)) continue;
    const americans = americanSpellings(word);
    const maybeTypo = !isEnglishWord(rarity, word);
    // Most words are neither: no lookup at all.
    if ((americans.length === 0 && !maybeTypo) || !writtenAsWord(word, q.text)) continue;
    suspects.push({ word, budget, forms: wordForms(word), americans, maybeTypo });
  }
  if (suspects.length === 0) return [];
  // Every spelling of every suspect in one read: on PostgreSQL a read is a round trip.
  const held = yield* wait(
    vocabulary.firstHeld(
      versionIds,
      suspects.flatMap((s) => [s.forms, s.americans]),
    ),
  );
  const out: Correction[] = [];
  for (const [i, { word, budget, maybeTypo }] of suspects.entries()) {
    // A form the lexical scan looks up anyway ("caching" -> "cache") is no misspelling.
    if (held[2 * i] !== null) continue;
    const american = held[2 * i + 1];
    if (american) {
      out.push({ from: word, to: american });
      continue;
    }
    if (!maybeTypo) continue;
    const documents = new Map<string, number>();
    for (const v of versionIds) {
      for (const [term, df] of yield* wait(vocabulary.termsStartingWith(v, word[0]!, word.length - budget, word.length + budget))) {
        if (/^[a-z]+$/.test(term)) documents.set(term, (documents.get(term) ?? 0) + df);
      }
    }
    let best: { term: string; distance: number; df: number } | null = null;
    for (const [term, df] of documents) {
      const distance = editDistance(word, term, budget);
      if (distance > budget) continue;
      if (!best || distance < best.distance || (distance === best.distance && (df > best.df || (df === best.df && term < best.term))))
        best = { term, distance, df };
    }
    if (best) out.push({ from: word, to: best.term });
  }
  return out;
}

/**
 * The question with its misspelled words corrected (analyzed again from the corrected text; the
 * embedding is kept, its character n-grams already place a typo near its word), and the corrections.
 */
export function correctSpelling(
  q: PreparedQuery,
  vocabulary: SyncVocabulary,
  rarity: WordRarity | null,
  versionIds: number[],
): { q: PreparedQuery; corrections: Correction[] } {
  return runSync(correctSpellingStep(q, vocabulary, rarity, versionIds));
}

/** correctSpelling over either backend's vocabulary. */
export function* correctSpellingStep(
  q: PreparedQuery,
  vocabulary: Vocabulary,
  rarity: WordRarity | null,
  versionIds: number[],
): Step<{ q: PreparedQuery; corrections: Correction[] }> {
  // Without the word table a typo cannot be told from a word: nothing is corrected.
  const corrections = rarity ? yield* spellingCorrectionsStep(q, vocabulary, rarity, versionIds) : [];
  if (corrections.length === 0) return { q, corrections };
  let text = q.text;
  for (const c of corrections) text = text.replace(standalone(c.from), (m) => (PROSE_WORD.test(m) ? c.to : m));
  return { q: { ...analyzeQuery(text), text: q.text, vector: q.vector }, corrections };
}
