import type { Embedder } from '../embed/types.ts';
import { joinedTokens, splitIdentifier } from './text.ts';
import { reduceErrorText } from './error-text.ts';
import { splitCode } from './code-text.ts';
import { isStopwordOf, questionLanguage, STOPWORDS, type QuestionLanguage } from './stopwords.ts';
import { TUNING } from './tuning.ts';

/**
 * A question prepared once and reused for every library version it is run against: its terms,
 * the FTS5 match expression, the identifiers it names, what kind of answer it wants, and its
 * embedding (null when no embedder is configured).
 */
export interface PreparedQuery {
  /** The question as asked. */
  text: string;
  /**
   * What is embedded: the question; for pasted error output its message, codes and names
   * (server/search/error-text.ts); for pasted code the sentences that ask (server/search/code-text.ts).
   */
  searchText: string;
  /** Lower-case content words (stopwords removed), identifiers split into parts and kept whole. */
  terms: string[];
  /**
   * The terms of what the question asks in its own words: `terms` without those of the code it
   * pastes (server/search/code-text.ts), whose names are the asker's own. The "nothing found"
   * decision weighs these, and of the code's terms only those some document holds.
   */
  askedTerms: string[];
  /** Code identifiers named in the question (camelCase, snake_case, dotted, calls, flags). */
  identifiers: string[];
  /** The index tokens looked up: for each term (the first TUNING.query.scanTerms), the term and its inflected forms (scored as one term). */
  termForms: string[][];
  /** FTS5 expression for the text columns (the first TUNING.query.matchTerms terms' forms ORed, each quoted), for the library probes. */
  match: string;
  /** The longest run of consecutive content words ("custom error handler"), lower case; '' when under two words. */
  phrase: string;
  /** The question is pasted output (a stack trace, a compiler error, a log line; server/search/error-text.ts). */
  pasted: boolean;
  /**
   * The question quotes the documents' own words: pasted output or pasted code. Ranked by the
   * weights learned from the headings as written (RankingModel.quoted): the shared words are its
   * best evidence. (Counting a named identifier or file name as quoting too lost 0.008 MRR@10 on the
   * blind split and more on four of seven held-out sets.)
   */
  quotes: boolean;
  /** +1 the question asks for code (how to, example, snippet), -1 for explanation (what is, why), 0 neither. */
  codeIntent: number;
  /** Programming languages the question names (ts, js, bash...), as codeLanguage values. */
  languages: string[];
  /** The language the question is written in when it is not English (server/search/stopwords.ts); null for English. */
  language: QuestionLanguage | null;
  vector: Float32Array | null;
}

/** Words of error output in general, dropped from pasted output (server/search/error-text.ts) when other words remain. */
const ERROR_WORDS = new Set(
  (
    'error errors err uncaught unhandled typeerror referenceerror syntaxerror rangeerror exception exceptions failed failing fails fail ' +
    'warning warn fatal throw thrown throws stack trace internal node cause caused'
  ).split(' '),
);

/** Question words that point to code or to prose. */
const CODE_CUES =
  /\b(how (do|can|to|should)|example|snippet|code|implement|write|syntax|configure|setup|set up|install|usage|call|register|create|define|use)\b/i;
const PROSE_CUES = /\b(what (is|are|does)|why|when should|difference|explain|overview|concept|meaning|describe|vs\.?|versus|compare|limitations?)\b/i;

const LANGUAGE_WORDS: Record<string, string[]> = {
  typescript: ['typescript', 'ts', 'tsx'],
  ts: ['typescript', 'ts', 'tsx'],
  javascript: ['javascript', 'js', 'jsx', 'mjs', 'cjs'],
  js: ['javascript', 'js', 'jsx', 'mjs', 'cjs'],
  python: ['python', 'py'],
  bash: ['bash', 'sh', 'shell', 'zsh', 'console'],
  shell: ['bash', 'sh', 'shell', 'zsh', 'console'],
  json: ['json', 'jsonc'],
  yaml: ['yaml', 'yml'],
  html: ['html'],
  css: ['css'],
  go: ['go', 'golang'],
  rust: ['rust', 'rs'],
  java: ['java'],
};

/**
 * A file's name: dotted parts and a source extension (vite.config.ts, app.module.ts; one dot is
 * rather a product, Node.js), or a configuration extension after a name of 4+ characters
 * (nest-cli.json, tsconfig.json; `c.json` is Hono's method). Never when written as a call.
 */
const FILE_NAME = /^[A-Za-z0-9_@-]+(\.[A-Za-z0-9_-]+)+\.[cm]?[jt]sx?$|^[A-Za-z0-9_@.-]{4,}\.(json|jsonc|ya?ml|toml)$/;

const WORD = /[A-Za-z_$@][A-Za-z0-9_$]*(?:[.:\-/][A-Za-z_$][A-Za-z0-9_$]*)*(?:\(\))?|\d+(?:\.\d+)*/g;

/** A light suffix stripper: the index has no stemmer, so plural and -ing/-ed forms are matched by prefix. */
export function stem(term: string): string {
  if (term.length < 5 || /\d/.test(term)) return term;
  for (const suffix of ['ations', 'ation', 'ings', 'ing', 'ies', 'ers', 'ed', 'es', 's']) {
    if (term.endsWith(suffix) && term.length - suffix.length >= 4) return term.slice(0, term.length - suffix.length);
  }
  return term;
}

function quote(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/**
 * Exact inflected forms to OR into the match: the index has no stemmer, and prefix queries
 * (plugin*) cost several times more than a few exact terms on a large index. plugins -> plugin,
 * plugin -> plugins, registering -> register, configuring -> configure, matches -> match.
 */
export function wordForms(t: string): string[] {
  const out = [t];
  if (t.length < 4 || /\d/.test(t)) return out;
  if (t.endsWith('ies') && t.length > 4) out.push(`${t.slice(0, -3)}y`);
  else if (/(ss|us|is)$/.test(t)) out.push(`${t}es`);
  else if (t.endsWith('es') && /(s|x|z|ch|sh)es$/.test(t)) out.push(t.slice(0, -2));
  else if (t.endsWith('s')) out.push(t.slice(0, -1));
  else if (t.endsWith('y') && !/[aeiou]y$/.test(t)) out.push(`${t.slice(0, -1)}ies`);
  else if (/(s|x|z|ch|sh)$/.test(t)) out.push(`${t}es`);
  else if (!/(ing|ed)$/.test(t)) out.push(`${t}s`);
  if (t.length >= 6 && t.endsWith('ing')) out.push(t.slice(0, -3), `${t.slice(0, -3)}e`);
  if (t.length >= 5 && t.endsWith('ed')) out.push(t.slice(0, -2), t.slice(0, -1));
  return out;
}

/**
 * Whether a question has anything to search for: a term that is not a stopword and not a single
 * letter. The query keeps all words when every one is a stopword ("how does it work"), which a
 * library given or named makes a question about that library; without one it asks about nothing.
 */
export function hasSearchableTerm(terms: string[]): boolean {
  return terms.some((t) => !STOPWORDS.has(t) && (t.length > 1 || /\d/.test(t)));
}

/** The terms of the sentences that ask; all terms when they ask nothing searchable ("how do I do this?"). */
function askedTermsOf(prose: string, terms: string[]): string[] {
  const asked = analyzeQuery(prose).terms;
  return hasSearchableTerm(asked) ? asked : terms;
}

/** The terms one word of a question asks for; the identifier it names, if any; whether it is a file's name. */
function wordTerms(word: string): { terms: string[]; identifier: string | null; file: boolean } {
  const call = word.endsWith('()');
  const raw = word.replace(/\(\)$/, '');
  const parts = splitIdentifier(raw);
  const terms: string[] = [];
  // A file's name (vite.config.ts, nest-cli.json) says where the answer goes, not what it is: its
  // joined token is rare and exact, and would rank every page showing that file first. Its parts stay.
  const file = !call && FILE_NAME.test(raw);
  const isIdent = !file && (parts.length > 1 || /[A-Z_$.]/.test(raw.slice(1)) || call || raw.startsWith('@'));
  // The whole identifier is one token in the index when it has no separators (useEffect -> useeffect);
  // with separators the index holds its joined forms (c.req.valid -> creqvalid, reqvalid; see
  // text.ts), of which the question asks for the whole one (its parts already count on their own).
  if (parts.length > 1 && /^[A-Za-z0-9]+$/.test(raw)) terms.push(raw.toLowerCase());
  const joined = file ? undefined : joinedTokens(raw).sort((a, b) => b.length - a.length)[0];
  if (joined) terms.push(joined);
  // Parts of an identifier are kept even when they are stopwords on their own (c.set, useEffect).
  for (const p of parts) if ((parts.length > 1 || !STOPWORDS.has(p)) && (p.length > 1 || /\d/.test(p))) terms.push(p);
  return { terms, identifier: isIdent && raw.length > 2 ? raw : null, file };
}

/** Terms, identifiers and the FTS5 match expression of a question (no embedding). */
export function analyzeQuery(asked: string): Omit<PreparedQuery, 'vector'> {
  const reduced = reduceErrorText(asked);
  // Pasted code: what the question asks first, then the code's own words (server/search/code-text.ts).
  const split = reduced.pasted ? null : splitCode(reduced.text);
  const text = split ? `${split.prose}\n${split.code}` : reduced.text;
  const terms: string[] = [];
  const identifiers: string[] = [];
  const seen = new Set<string>();
  const language = questionLanguage(text);
  // In another language its function words are stopwords, and its accented words (erhöhe, große),
  // which WORD would cut into fragments, are no terms: the documents are in English.
  const foreign = (m: RegExpMatchArray) => language !== null && (isStopwordOf(language, m[0].toLowerCase()) || besideNonAscii(text, m));
  const add = (t: string) => {
    if (t.length === 0 || seen.has(t)) return;
    seen.add(t);
    terms.push(t);
  };
  const files: string[] = [];
  for (const m of text.matchAll(WORD)) {
    if (foreign(m)) continue;
    const w = wordTerms(m[0]);
    if (w.file) files.push(m[0]);
    if (w.identifier) identifiers.push(w.identifier);
    w.terms.forEach(add);
  }
  // Pasted output: the words every error message has (error, uncaught, failed) match every page about
  // errors; what is left names this error.
  if (reduced.pasted) {
    const specific = terms.filter((t) => !ERROR_WORDS.has(t));
    if (specific.length >= 2) terms.splice(0, terms.length, ...specific);
  }
  // Everything was a stopword ("how does it work"): fall back to all words so the query still matches.
  if (terms.length === 0) for (const m of text.matchAll(WORD)) for (const p of splitIdentifier(m[0])) add(p);

  // The phrase is the longest run of consecutive content words ("custom error handler"). It is not
  // part of the FTS5 match (phrase matching costs a third of the query time on 1M snippets and did
  // not change the reranked results on test/eval); the reranker checks it on the candidates instead.
  let run: string[] = [];
  let phrase: string[] = [];
  for (const m of text.matchAll(WORD)) {
    const parts = splitIdentifier(m[0]);
    if ((parts.length === 1 && STOPWORDS.has(parts[0]!)) || foreign(m)) {
      run = [];
      continue;
    }
    run = [...run, ...parts];
    if (run.length > phrase.length) phrase = run;
  }
  const clauses: string[] = [];
  const seenForms = new Set<string>();
  const termForms: string[][] = [];
  terms.slice(0, TUNING.query.scanTerms).forEach((t, i) => {
    // A form claimed by an earlier term (plugins -> plugin after "plugin") is not counted twice.
    const forms = wordForms(t).filter((form) => !seenForms.has(form));
    for (const form of forms) seenForms.add(form);
    if (forms.length > 0) termForms.push(forms);
    if (i < TUNING.query.matchTerms) for (const form of forms) clauses.push(quote(form));
  });
  const languages = new Set<string>();
  // hasOwn: a question word like "constructor" must not reach Object.prototype.
  for (const t of terms) if (Object.hasOwn(LANGUAGE_WORDS, t)) for (const l of LANGUAGE_WORDS[t]!) languages.add(l);
  const codeCue = CODE_CUES.test(text) || identifiers.length > 0 || files.length > 0;
  const proseCue = PROSE_CUES.test(text);
  return {
    text: asked,
    searchText: withoutFileNames(split ? split.prose : text, files),
    terms,
    askedTerms: split ? askedTermsOf(split.prose, terms) : terms,
    identifiers: [...new Set(identifiers)],
    termForms,
    match: clauses.join(' OR '),
    phrase: phrase.length > 1 ? phrase.join(' ') : '',
    pasted: reduced.pasted,
    quotes: reduced.pasted || split !== null,
    codeIntent: codeCue && !proseCue ? 1 : proseCue && !codeCue ? -1 : 0,
    languages: [...languages],
    language,
  };
}

/**
 * What is embedded of a question naming files: the question without their names, when words remain.
 * A file's name says where the answer goes, not what it is, and embedded it pulls the question
 * towards every page about that file (`vite.config.ts base path` to "Configuring Vite").
 */
function withoutFileNames(text: string, files: string[]): string {
  if (files.length === 0) return text;
  const rest = files
    .reduce((t, f) => t.split(f).join(' '), text)
    .replace(/\s+/g, ' ')
    .trim();
  return /[A-Za-z]{3}/.test(rest) ? rest : text;
}

/** A letter outside ASCII (ö, ß, ç), which WORD does not take. */
const NON_ASCII_LETTER = /(?![\x00-\x7F])\p{L}/u;

/** True when a matched word is part of a longer word with letters WORD does not take (erh|ö|he). */
function besideNonAscii(text: string, m: RegExpMatchArray): boolean {
  const at = m.index!;
  return NON_ASCII_LETTER.test(text.charAt(at - 1)) || NON_ASCII_LETTER.test(text.charAt(at + m[0].length));
}

/** Analyzes a question and embeds it (once; reuse the result for every library searched). */
export async function prepareQuery(text: string, embedder: Embedder | null): Promise<PreparedQuery> {
  return withVector(analyzeQuery(text), embedder);
}

/**
 * prepareQuery for the answering services: when the embedder fails (an endpoint down), the question
 * is searched lexically only (vector null) and `error` says why, so the answer can be marked partial.
 */
export async function prepareQueryOrLexical(asked: string | Question, embedder: Embedder | null): Promise<{ q: PreparedQuery; error: Error | null }> {
  const base = typeof asked === 'string' ? analyzeQuery(asked) : asked.analysis;
  try {
    return { q: await withVector(base, embedder), error: null };
  } catch (err) {
    return { q: { ...base, vector: null }, error: err instanceof Error ? err : new Error(String(err)) };
  }
}

/** What analyzeQuery makes of a question: everything a PreparedQuery holds but the vector. */
export type QueryAnalysis = Omit<PreparedQuery, 'vector'>;

/**
 * A question as asked, analysed at most once however many steps read it: library selection (its
 * mentions, the whole-index probe, ties between names) and the retrieval of /api/v3/search.
 */
export class Question {
  private analysed: QueryAnalysis | null = null;

  constructor(readonly text: string) {}

  get analysis(): QueryAnalysis {
    return (this.analysed ??= analyzeQuery(this.text));
  }
}

async function withVector(base: Omit<PreparedQuery, 'vector'>, embedder: Embedder | null): Promise<PreparedQuery> {
  if (!embedder) return { ...base, vector: null };
  const [v] = await embedder.embed([base.searchText]);
  return { ...base, vector: v ?? null };
}
