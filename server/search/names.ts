import type { Library } from '../../lib/model.ts';
import { TUNING } from './tuning.ts';

/**
 * Product-name matching: turns a library into the names people call it by ("fastify",
 * "next js", "vue router", "hono") and scores a typed name against them, typos included.
 * Name matching decides which library a request means; popularity only breaks ties.
 */

/** Repository or host names that say nothing about the product. */
const GENERIC = new Set([
  'website',
  'site',
  'docs',
  'doc',
  'documentation',
  'www',
  'main',
  'core',
  'api',
  'sdk',
  'repo',
  'monorepo',
  'handbook',
  'guide',
  'guides',
  'github',
  'gitlab',
  'io',
  'dev',
  'org',
  'com',
  'net',
  'app',
  'home',
  'developer',
  'developers',
  'help',
  'js',
  'lib',
]);

/**
 * Product names that are also everyday words: in a free-text question they count as a mention
 * only when written like a name (capitalised, or with js / .js), e.g. "Next.js", "Express".
 */
const EVERYDAY = new Set([
  'next',
  'express',
  'request',
  'debug',
  'commander',
  'async',
  'moment',
  'got',
  'node',
  'web',
  'http',
  'test',
  'query',
  'router',
  'table',
  'form',
  'forms',
  'store',
  'cache',
  'fetch',
  'image',
  'color',
  'path',
  'glob',
  'date',
  'time',
  'day',
  'solid',
  'material',
  'sharp',
  'socket',
  'relay',
  'turbo',
  'lit',
  'core',
  'react',
  'remix',
  'nest',
  'redux',
  'ui',
  'chalk',
  'yarn',
  'jest',
  'mocha',
  'bull',
  'bee',
  'ember',
  'backbone',
  'meteor',
  'electron',
  'ionic',
  'passport',
  'helmet',
  'immer',
  'parcel',
  'rollup',
  'astro',
  'storybook',
  'apollo',
  'sails',
  'feathers',
  'vue',
  'svelte',
  'angular',
  'loopback',
  'ora',
  'joi',
  'yup',
  'ws',
  'pg',
  'ms',
]);

export function normalizeName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '');
}

/** "nextjs" -> "next", "honojs" -> "hono", "vue.js" -> "vue": the js suffix is noise in a name. */
export function stripJs(n: string): string {
  return n.length > 4 && n.endsWith('js') ? n.slice(0, -2) : n;
}

export interface NameKey {
  /** Normalized name (lower case, letters and digits only). */
  key: string;
  /** How strongly this name stands for the library (TUNING.names.weights: title and repo 1, owner and site host less). */
  weight: number;
  /** Title and repository names may be matched with typos; owner and host names only exactly. */
  fuzzy: boolean;
}

function hostLabel(url: string | null): string | null {
  if (!url) return null;
  try {
    const labels = new URL(url).hostname.toLowerCase().split('.');
    labels.pop(); // the top-level domain
    const named = labels.filter((l) => !GENERIC.has(l));
    return named[named.length - 1] ?? null;
  } catch {
    return null;
  }
}

/** Words a documentation site's title wraps around the product's name ("The Complete StrictPath Guide"). */
const TITLE_FILLER = new Set([
  'the',
  'a',
  'an',
  'complete',
  'official',
  'ultimate',
  'definitive',
  'guide',
  'guides',
  'docs',
  'documentation',
  'handbook',
  'manual',
  'reference',
  'tutorial',
  'tutorials',
  'user',
  'users',
  'developer',
  'developers',
  'introduction',
  'to',
  'of',
  'for',
  'and',
  'home',
  'site',
  'website',
]);

/** The product name in a title: its words without the filler, or null when that leaves nothing or the title itself. */
function titleCore(title: string | null | undefined): string | null {
  if (!title) return null;
  const words = title.split(/[^A-Za-z0-9.+-]+/).filter(Boolean);
  const core = words.filter((w) => !TITLE_FILLER.has(w.toLowerCase()));
  return core.length > 0 && core.length < words.length ? core.join(' ') : null;
}

function repoOf(url: string | null): string | null {
  if (!url) return null;
  const m = /github\.com\/[^/]+\/([^/#?]+)/i.exec(url) ?? /gitlab\.com\/[^/]+\/([^/#?]+)/i.exec(url);
  return m ? m[1]!.replace(/\.git$/, '') : null;
}

/** Every name a library goes by, strongest first. */
export function namesOf(library: Library): NameKey[] {
  const out = new Map<string, NameKey>();
  const add = (raw: string | null | undefined, weight: number, fuzzy: boolean) => {
    if (!raw) return;
    for (const n of new Set([normalizeName(raw), stripJs(normalizeName(raw))])) {
      if (n.length < 2 || GENERIC.has(n)) continue;
      const prev = out.get(n);
      if (!prev || prev.weight < weight) out.set(n, { key: n, weight, fuzzy: fuzzy || (prev?.fuzzy ?? false) });
    }
  };
  const [, owner = '', repo = ''] = library.id.split('/');
  const w = TUNING.names.weights;
  add(library.title, w.title, true);
  // A crawled site's ID says nothing (`/websites/127-0-0-1-8080-static`): its title names the product.
  add(titleCore(library.title), w.titleCore, true);
  add(repo, w.repo, true);
  add(repoOf(library.docsRepoUrl), w.docsRepo, true);
  add(repoOf(library.sourceUrl), w.sourceRepo, true);
  add(owner, w.owner, false);
  add(hostLabel(library.docsSiteUrl), w.docsHost, false);
  add(hostLabel(library.sourceUrl), w.sourceHost, false);
  return [...out.values()].sort((a, b) => b.weight - a.weight);
}

/** Rows of the distance table, reused by every call (names are short; they grow when needed). */
let rows = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * Damerau-Levenshtein (optimal string alignment) distance, capped: returns cap+1 once exceeded.
 * Library selection scores a typed name against every library's names, so this runs thousands of
 * times per request: three reused rows instead of a table per call.
 */
export function editDistance(a: string, b: string, cap = 2): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  if (rows[0]!.length <= b.length) rows = rows.map(() => new Int32Array(b.length * 2 + 1));
  let [prev2, prev, cur] = rows as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) v = Math.min(v, prev2[j - 2]! + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > cap) return cap + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return Math.min(prev[b.length]!, cap + 1);
}

/** Typos allowed between two names: none when both are 3 letters or less ("zod" vs "zed"), one up to 7 letters, two beyond. */
function typoBudget(shortest: number, longest: number): number {
  return shortest < 3 || longest < 4 ? 0 : shortest < 8 ? 1 : 2;
}

/** Two 3-letter names that differ by two adjacent letters swapped ("zdo" for "zod"): a slip of the keys, not another product. */
function swapped(a: string, b: string): boolean {
  if (a.length !== 3 || b.length !== 3 || a === b) return false;
  return (a[0] === b[1] && a[1] === b[0] && a[2] === b[2]) || (a[0] === b[0] && a[1] === b[2] && a[2] === b[1]);
}

export interface NameMatch {
  score: number;
  reason: string;
}

/**
 * Scores a typed product name ("fastify", "next js", "vue-router", "fastfy") against a library's
 * names (TUNING.names.match): exact 1, exact without a js suffix 0.97, a word of a multi-word name
 * 0.8, typos 0.7-0.55, prefix 0.5, words found in title and description 0.35 (times the name's
 * weight). 0 = no match.
 */
export function scoreName(t: TypedName, keys: NameKey[], library: Pick<Library, 'title' | 'description'>): NameMatch {
  const { n, ns, words, meaningful } = t;
  if (!n) return { score: 0, reason: 'empty' };
  // Runs for every library on every request that names one: no closures, and a reason is only
  // written for a score that improves on the best so far.
  let score = 0;
  let reason = 'no name match';
  const m = TUNING.names.match;
  for (const k of keys) {
    if (k.key === n) {
      if (k.weight > score) [score, reason] = [k.weight, `name "${k.key}"`];
    } else if ((k.key === ns || stripJs(k.key) === ns) && m.noJs * k.weight > score) [score, reason] = [m.noJs * k.weight, `name "${k.key}"`];
    if (words.length > 1 && words.length <= 4 && m.word * k.weight > score && words.some((w) => w === k.key || stripJs(w) === k.key)) {
      [score, reason] = [m.word * k.weight, `word of "${t.typed}" is "${k.key}"`];
    }
    if (!k.fuzzy || m.typo * k.weight <= score) continue;
    const budget = typoBudget(Math.min(ns.length, k.key.length), Math.max(ns.length, k.key.length));
    // Three-letter names have no typo budget (below); the `continue` above already kept only a better score.
    if (swapped(ns, k.key)) [score, reason] = [m.typo * k.weight, `"${t.typed}" is "${k.key}" with two letters swapped`];
    if (budget > 0) {
      const d = ns === n ? editDistance(n, k.key, budget) : Math.min(editDistance(ns, k.key, budget), editDistance(n, k.key, budget));
      const typo = (d === 1 ? m.typo : m.twoTypos) * k.weight;
      if (d <= budget && typo > score) [score, reason] = [typo, `"${t.typed}" is ${d} edit(s) from "${k.key}"`];
    }
    if (ns.length >= 4 && m.prefix * k.weight > score && k.key.startsWith(ns) && ns.length / k.key.length >= m.prefixShare)
      [score, reason] = [m.prefix * k.weight, `prefix of "${k.key}"`];
  }
  // Only a descriptive phrase ("schema validation"), never one word: "next js" must not find
  // Vite because its description says "Next generation".
  if (score < m.description && meaningful.length >= 2 && meaningful.every((w) => wordsOf(library).has(w)))
    [score, reason] = [m.description, `title/description contain "${t.typed}"`];
  return { score, reason };
}

/** A typed name prepared once for scoring against every library. */
export interface TypedName {
  typed: string;
  /** Normalized, and without a js suffix. */
  n: string;
  ns: string;
  /** Its words (without "js"), and those longer than two letters. */
  words: string[];
  meaningful: string[];
}

export function typedName(typed: string): TypedName {
  const n = normalizeName(typed);
  const words = typed
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0 && w !== 'js');
  return { typed, n, ns: stripJs(n), words, meaningful: words.filter((w) => w.length > 2) };
}

/** The words of a library's title and description, kept while the library object lives (the catalogue holds it). */
const libraryWords = new WeakMap<object, Set<string>>();

function wordsOf(library: Pick<Library, 'title' | 'description'>): Set<string> {
  let w = libraryWords.get(library);
  if (!w) {
    w = new Set(`${library.title} ${library.description}`.toLowerCase().split(/[^a-z0-9]+/));
    libraryWords.set(library, w);
  }
  return w;
}

export interface Mention {
  /** Character offset of the first mention (orders the selection). */
  at: number;
  text: string;
  reason: string;
}

/** Single-deletion variants of a word (and the word itself): two words within one edit share one. */
function deletions(w: string): string[] {
  const out = [w];
  for (let i = 0; i < w.length; i++) out.push(w.slice(0, i) + w.slice(i + 1));
  return out;
}

/**
 * The names of many libraries, indexed so that a question is read once however many libraries
 * there are: exact names in a map, typo-able names (5+ letters) by their deletion variants
 * (the SymSpell idea: a word within one edit of a name shares a deletion variant with it).
 */
export class MentionIndex<T> {
  private readonly exact = new Map<string, { item: T; key: NameKey }[]>();
  private readonly fuzzy = new Map<string, { item: T; key: NameKey }[]>();
  /** Owner and host names: a mention only as the scope of an npm package (`@tanstack/react-query`). */
  private readonly scopes = new Map<string, { item: T; key: NameKey }[]>();

  constructor(items: { item: T; keys: NameKey[] }[]) {
    for (const { item, keys } of items) {
      for (const key of keys) {
        if (key.weight < TUNING.names.mentionWeight) {
          // Owner and host names do not count as mentions in prose ("facebook", "vercel"), but a
          // package scope is the publishing organisation.
          push(this.scopes, key.key, { item, key });
          continue;
        }
        push(this.exact, key.key, { item, key });
        if (key.fuzzy && key.key.length >= 5) for (const d of new Set(deletions(key.key))) push(this.fuzzy, d, { item, key });
      }
    }
  }

  /**
   * The first mention of each library in a question: a word or two-word phrase equal to one of
   * its names (one typo allowed on words of 6+ letters), dotted identifiers split into their
   * parts, or the scope of an npm package its owner publishes (`@tanstack/react-query`); everyday
   * words count only when written like a product name.
   */
  find(question: string): Map<T, Mention> {
    const found = new Map<T, Mention>();
    const tokens = [...question.matchAll(/[A-Za-z0-9][A-Za-z0-9.+_-]*[A-Za-z0-9+]|[A-Za-z0-9]/g)].map((m) => ({ text: m[0], at: m.index ?? 0 }));
    // A library's first mention is the one kept.
    const keep = (item: T, m: Mention) => {
      const prev = found.get(item);
      if (!prev || m.at < prev.at) found.set(item, m);
    };
    const offer = (item: T, key: NameKey, text: string, at: number, nextText: string | undefined, typo: boolean) => {
      const n = normalizeName(text);
      // An everyday word counts only when written like a product name.
      if (EVERYDAY.has(key.key) || EVERYDAY.has(n)) {
        const sentenceStart = at === 0 || /(^|[.!?:])$/.test(question.slice(0, at).trimEnd());
        const looksLikeName = (/^[A-Z]/.test(text) && !sentenceStart) || /\.?js$/i.test(text) || /^js$/i.test(nextText ?? '');
        if (!looksLikeName) return;
      }
      keep(item, { at, text, reason: typo ? `mentions "${text}" (typo of "${key.key}")` : `mentions "${text}"` });
    };
    const consider = (text: string, at: number, nextText: string | undefined) => {
      const n = normalizeName(text);
      if (n.length < 2) return;
      for (const v of new Set([n, stripJs(n)])) for (const e of this.exact.get(v) ?? []) offer(e.item, e.key, text, at, nextText, false);
      if (n.length >= 6 && !/\d/.test(n) && !EVERYDAY.has(n)) {
        const seen = new Set<NameKey>();
        for (const d of deletions(n)) {
          for (const e of this.fuzzy.get(d) ?? []) {
            if (seen.has(e.key) || e.key.key === n) continue;
            seen.add(e.key);
            if (editDistance(n, e.key.key, 1) <= 1) offer(e.item, e.key, text, at, nextText, true);
          }
        }
      }
    };
    for (const m of question.matchAll(/@([A-Za-z0-9][\w.-]*)\//g)) {
      for (const e of this.scopes.get(normalizeName(m[1]!)) ?? [])
        keep(e.item, { at: m.index ?? 0, text: `@${m[1]}/`, reason: `imports a package of the @${m[1]} scope` });
    }
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      consider(t.text, t.at, tokens[i + 1]?.text);
      // fastify.register, vite.config.ts, next.js: the dotted parts are names too.
      if (t.text.includes('.')) {
        const parts = t.text.split('.');
        let off = t.at;
        parts.forEach((p, j) => {
          if (p) consider(p, off, parts[j + 1] ?? tokens[i + 1]?.text);
          off += p.length + 1;
        });
      }
      const next = tokens[i + 1];
      if (next && next.at - (t.at + t.text.length) <= 2) consider(`${t.text} ${next.text}`, t.at, tokens[i + 2]?.text);
    }
    return found;
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** Where a question names one library (see MentionIndex.find). */
export function findMention(question: string, keys: NameKey[]): Mention | null {
  return new MentionIndex([{ item: 0, keys }]).find(question).get(0) ?? null;
}
