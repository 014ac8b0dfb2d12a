import { createRequire } from 'node:module';
import { TUNING } from './tuning.ts';

/**
 * Stopwords: English's, which every question drops, and those of the other languages a question
 * may be written in, which tell its language.
 */

/** English words that carry no topic; dropped from the OR-terms (the whole phrase still contains them). */
export const STOPWORDS = new Set(
  (
    'a an and are as at be but by can could do does did for from had has have how i if in into is it its me my of on or our should so ' +
    'than that the their them then there these they this to use used using was we what when where which while who why will with would ' +
    'you your yours get set make way want need able about also any all just like some such via vs versus please tell show explain ' +
    'difference between work works working does doing done one ones example examples'
  ).split(/\s+/),
);

/**
 * Tells a question written in another language than English ("Wie erhöhe ich das bodyLimit für
 * große Uploads?"). Developers ask in their own language and keep the API names; the documentation
 * is in English, so the question's function words and its other words (installiere, configurar)
 * are not the documents' words and say nothing about whether they answer: server/search/query.ts
 * drops its function words and the fragments of its accented words, and nothing-found.ts weighs only
 * the words English or the documents know. (Spelling correction reads its cognates as the
 * documents' words: `rekursives` -> `recursive`, `mocke` -> `mock`.)
 *
 * A question is in language L when at least two distinct words, and a fifth of its words
 * (TUNING.query.foreignStopwords, foreignShare), are stopwords of L (the stopwords-iso lists) that are not English stopwords (STOPWORDS: the
 * stopwords-iso English list also holds `come`, `con`, `per`, `il`, which Italian needs). Over the
 * 1,800 English questions of test/eval none is taken for another language.
 */
const LANGUAGES = ['de', 'fr', 'es', 'pt', 'it', 'nl'] as const;
export type QuestionLanguage = (typeof LANGUAGES)[number];

const lists = createRequire(import.meta.url)('stopwords-iso/stopwords-iso.json') as Record<string, string[]>;
const FOREIGN = new Map<QuestionLanguage, ReadonlySet<string>>(
  LANGUAGES.map((l) => [l, new Set(lists[l]!.filter((w) => /^\p{L}{2,}$/u.test(w) && !STOPWORDS.has(w)))]),
);

/** The question's language when it is one of LANGUAGES; null for English (or too short to tell). */
export function questionLanguage(text: string): QuestionLanguage | null {
  const words = [...new Set((text.toLowerCase().match(/\p{L}+/gu) ?? []).filter((w) => w.length >= 2))];
  let best: QuestionLanguage | null = null;
  let most = 0;
  for (const [lang, stop] of FOREIGN) {
    let n = 0;
    for (const w of words) if (stop.has(w)) n++;
    if (n >= TUNING.query.foreignStopwords && n >= TUNING.query.foreignShare * words.length && n > most) [best, most] = [lang, n];
  }
  return best;
}

/** True when `word` (lower case) is a stopword of `lang`. */
export function isStopwordOf(lang: QuestionLanguage, word: string): boolean {
  return FOREIGN.get(lang)!.has(word);
}
