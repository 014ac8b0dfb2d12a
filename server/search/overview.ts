/**
 * Questions that ask what a library is ("pino", "what is hono", "zod overview", "vitest docs")
 * name no topic of its documentation: their only words are the library's own names and words
 * asking about it as a whole. Searched as typed, the name matches whatever repeats it (pino's
 * transports `pino-loki`, `pino-redis`; hono's presets `hono` and `hono/tiny`). What such a question
 * means is the library's one-line description (from its bundle, repository or site), so it is
 * searched together with the question.
 */
import type { Library } from '../../lib/model.ts';
import { namesOf, normalizeName, stripJs, type NameKey } from './names.ts';
import { STOPWORDS } from './stopwords.ts';

/**
 * Words that ask what a library is, as a whole, rather than about one of its topics. Words asking
 * how to begin with it (install, getting started, quick start, hello world) are not among them:
 * documentation has sections of those names, and the description does not say how to begin (with
 * them, "nestjs first steps hello world" lost its first-steps page to the introduction).
 */
const OVERVIEW_WORDS = new Set(
  (
    'whats introduction intro introduce introducing overview docs documentation doc summary describe description purpose main ' +
    'feature features concept concepts library framework package tool'
  ).split(/\s+/),
);

const TOKEN = /[a-z0-9][a-z0-9.+#_-]*/g;

/** The words of a short question that are neither stopwords nor overview words (names left to the caller); null past 12 words. */
function topicWords(question: string): string[] | null {
  const tokens = question.toLowerCase().match(TOKEN) ?? [];
  if (tokens.length === 0 || tokens.length > 12) return null;
  // "what's" leaves an "s"; "vite.js," its trailing punctuation.
  return tokens.map((t) => t.replace(/(?<![.+#_-])[.+#_-]+$/, '')).filter((w) => w.length > 1 && !STOPWORDS.has(w) && !OVERVIEW_WORDS.has(w));
}

/** True when a question could ask for an overview: a few words besides stopwords and overview words, which may be a library's names. */
export function mayAskOverview(question: string): boolean {
  const words = topicWords(question);
  return words !== null && words.length <= 3;
}

/**
 * The text to search for a question that asks only for the overview of `library` (every word one
 * of its names, a stopword or an overview word): the question followed by the library's title and
 * description. Null for any other question, and for a library without a description. `keys` are
 * the library's names when the caller has them (the catalogue's), else they are derived here.
 */
export function overviewText(question: string, library: Library, keys?: NameKey[]): string | null {
  const description = library.description.trim();
  const words = topicWords(question);
  if (!description || words === null || words.length > 3) return null;
  // Every name is drawn from these strings (or is one of the catalogue's keys, a package name), so a
  // word none of them spells is no name: most questions stop here, before the names are derived
  // (which parses addresses).
  const spelled = normalizeName(
    [library.id, library.title, library.docsRepoUrl, library.sourceUrl, library.docsSiteUrl, ...(keys ?? []).map((k) => k.key)].join(' '),
  );
  if (!words.every((w) => spelled.includes(stripJs(normalizeName(w))))) return null;
  const names = new Set((keys ?? namesOf(library)).map((k) => k.key));
  const isName = (s: string) => names.has(normalizeName(s)) || names.has(stripJs(normalizeName(s)));
  for (let i = 0; i < words.length; i++) {
    // Two-word names ("tanstack query") are one name.
    if (i + 1 < words.length && isName(words[i]! + words[i + 1]!)) i++;
    else if (!isName(words[i]!)) return null;
  }
  return `${question}\n${library.title}: ${description}`;
}
