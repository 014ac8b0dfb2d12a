import { analyzeQuery, wordForms, type PreparedQuery } from './query.ts';
import { STOPWORDS } from './stopwords.ts';
import { editDistance } from './names.ts';
import { isEnglishWord, type WordRarity } from './word-rarity.ts';
import { TUNING } from './tuning.ts';

/**
 * Spelling: a question word that no searched version holds is read as the word they hold instead,
 * so a misspelling does not lose the word that mattered most: its American spelling (`behaviour`
 * -> `behavior`), or, for a word that is not English (`serilaizer`, `redcat`), the closest word
 * (`serializer`, `redact`). The vocabulary is the versions' own term index; the builtin word table
 * tells a typo from a word the documents happen not to use (`refuse`, `stripe`, `hangs` stay).
 */

/** The term index as spelling reads it (server/store/terms.ts). */
export interface Vocabulary {
  holds(versionId: number, term: string): boolean;
  termsStartingWith(versionId: number, first: string, minLength: number, maxLength: number): Map<string, number>;
}

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

function writtenAsWord(word: string, text: string): boolean {
  return [...text.matchAll(standalone(word))].some((m) => PROSE_WORD.test(m[0]));
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
export function spellingCorrections(q: PreparedQuery, vocabulary: Vocabulary, rarity: WordRarity, versionIds: number[]): Correction[] {
  const out: Correction[] = [];
  const held = (term: string) => versionIds.some((v) => vocabulary.holds(v, term));
  for (const word of q.terms) {
    const budget = typoBudget(word.length);
    if (budget === 0 || !/^[a-z]+$/.test(word) || STOPWORDS.has(word)) continue;
    const americans = americanSpellings(word);
    const maybeTypo = !isEnglishWord(rarity, word);
    // Most words are neither: no lookup at all.
    if ((americans.length === 0 && !maybeTypo) || !writtenAsWord(word, q.text)) continue;
    // A form the lexical scan looks up anyway ("caching" -> "cache") is no misspelling.
    if (wordForms(word).some(held)) continue;
    const american = americans.find(held);
    if (american) {
      out.push({ from: word, to: american });
      continue;
    }
    if (!maybeTypo) continue;
    const documents = new Map<string, number>();
    for (const v of versionIds) {
      for (const [term, df] of vocabulary.termsStartingWith(v, word[0]!, word.length - budget, word.length + budget)) {
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
  vocabulary: Vocabulary,
  rarity: WordRarity | null,
  versionIds: number[],
): { q: PreparedQuery; corrections: Correction[] } {
  // Without the word table a typo cannot be told from a word: nothing is corrected.
  const corrections = rarity ? spellingCorrections(q, vocabulary, rarity, versionIds) : [];
  if (corrections.length === 0) return { q, corrections };
  let text = q.text;
  for (const c of corrections) text = text.replace(standalone(c.from), (m) => (PROSE_WORD.test(m) ? c.to : m));
  return { q: { ...analyzeQuery(text), text: q.text, vector: q.vector }, corrections };
}
