/**
 * PostgreSQL's stand-in for SQLite's FTS5 table snippet_fts: the weighted tsvector of a snippet and
 * the translation of the callers' FTS5 match expressions into tsquery text. Both sides tokenize in
 * the node, as FTS5's `unicode61 remove_diacritics 2` tokenizer does (server/search/text.ts
 * indexTokens, which the store may not import), and hand PostgreSQL finished lexemes: its own parser
 * would read `vite.config.ts` as one host name and `foo-bar` as three words, and then match other
 * rows than FTS5.
 */

const TOKEN = /[\p{L}\p{N}]+/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const MARKS = /\p{M}+/gu;

/** The tokens FTS5's unicode61 tokenizer (remove_diacritics 2) makes of a text: runs of letters and digits, lower case, without diacritics. */
export function ftsTokens(text: string): string[] {
  if (!text) return [];
  const plain = NON_ASCII.test(text) ? text.normalize('NFD').replace(MARKS, '') : text;
  return plain.toLowerCase().match(TOKEN) ?? [];
}

/** The full-text columns of a snippet, in FTS5's column order (SnippetRow['fts']). */
export interface FtsColumns {
  title: string;
  breadcrumb: string;
  description: string;
  code: string;
  content: string;
}

/**
 * The weight label of each column. FTS5 ranks with bm25() at equal column weights (migration 001
 * configures no `rank`), so the probes give every label the same weight (PROBE_WEIGHTS); the labels
 * keep which column a word came from, for a ranking that one day weighs them.
 */
const LABELS: [keyof FtsColumns, string][] = [
  ['title', 'A'],
  ['breadcrumb', 'B'],
  ['description', 'C'],
  ['code', 'D'],
  ['content', 'D'],
];

/** ts_rank's weights for labels D, C, B, A: all equal, as FTS5's bm25() weighs its columns. */
export const PROBE_WEIGHTS = '{1,1,1,1}';

/** tsvector limits: a position is at most 16383, a lexeme holds at most 256 positions and 2046 bytes, a tsvector under 1 MB. */
const MAX_POS = 16383;
const MAX_POSITIONS = 256;
const MAX_LEXEME_BYTES = 2046;
const MAX_VECTOR_BYTES = 1_000_000;

/** A lexeme as tsvector and tsquery text spell it: quoted, quotes doubled, backslashes escaped. */
function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * The tsvector text of a snippet's columns. Positions run on through the columns with a gap between
 * two, so that a phrase never matches across a column boundary, as in FTS5. What PostgreSQL cannot
 * hold is left out: a token over 2046 bytes (a base64 blob in code), positions past 256 of one
 * lexeme, lexemes past 1 MB (none of these changes which rows a probe's words match).
 */
export function tsvectorText(cols: FtsColumns): string {
  const entries = new Map<string, string[]>();
  let pos = 0;
  for (const [col, label] of LABELS) {
    const tokens = ftsTokens(cols[col]);
    if (tokens.length === 0) continue;
    pos++;
    for (const t of tokens) {
      pos++;
      let list = entries.get(t);
      if (!list) entries.set(t, (list = []));
      if (list.length < MAX_POSITIONS) list.push(`${Math.min(pos, MAX_POS)}${label === 'D' ? '' : label}`);
    }
  }
  const out: string[] = [];
  let bytes = 0;
  for (const [lexeme, positions] of entries) {
    const size = Buffer.byteLength(lexeme);
    if (size > MAX_LEXEME_BYTES) continue;
    bytes += size + 8 + 2 * positions.length;
    if (bytes > MAX_VECTOR_BYTES) break;
    // Positions clamped at MAX_POS repeat; PostgreSQL keeps one of each.
    out.push(`${quoteLexeme(lexeme)}:${[...new Set(positions)].join(',')}`);
  }
  return out.join(' ');
}

/** A parsed match expression: lexeme phrases under AND, OR and NOT; `none` matches no row. */
export type FtsNode =
  | { op: 'phrase'; lexemes: string[]; prefix: boolean }
  | { op: 'and' | 'or'; of: FtsNode[] }
  | { op: 'not'; left: FtsNode; right: FtsNode }
  | { op: 'none' };

export class FtsSyntaxError extends Error {
  override name = 'FtsSyntaxError';
}

/**
 * Parses the FTS5 syntax the callers build (server/search/query.ts and select.ts: quoted words joined
 * by OR; the SQLite store adds parentheses and a column filter itself) and a little more: "strings"
 * ("" is a quote inside one), barewords, `*` after a phrase (prefix), `+` between phrases, OR, AND,
 * NOT, implicit AND, parentheses. Column filters, NEAR and `^` are refused (FtsSyntaxError): no
 * caller writes them. The text of a string or bareword only ever becomes lexemes (ftsTokens), so no
 * input can reach tsquery's syntax.
 */
export function parseFtsMatch(match: string): FtsNode {
  const tokens = lex(match);
  let i = 0;
  const peek = () => tokens[i];
  const or = (): FtsNode => {
    const of = [and()];
    while (peek()?.kind === 'OR') {
      i++;
      of.push(and());
    }
    return of.length === 1 ? of[0]! : { op: 'or', of };
  };
  const and = (): FtsNode => {
    const of = [not()];
    for (;;) {
      const t = peek();
      if (t?.kind === 'AND') {
        i++;
        of.push(not());
      } else if (t && (t.kind === 'phrase' || t.kind === '(')) of.push(not());
      else break;
    }
    return of.length === 1 ? of[0]! : { op: 'and', of };
  };
  const not = (): FtsNode => {
    let left = primary();
    while (peek()?.kind === 'NOT') {
      i++;
      left = { op: 'not', left, right: primary() };
    }
    return left;
  };
  const primary = (): FtsNode => {
    const t = tokens[i++];
    if (!t) throw new FtsSyntaxError('the match expression ends too early');
    if (t.kind === '(') {
      const inner = or();
      if (tokens[i++]?.kind !== ')') throw new FtsSyntaxError('a parenthesis is not closed');
      return inner;
    }
    if (t.kind !== 'phrase') throw new FtsSyntaxError(`unexpected ${t.kind}`);
    const lexemes = [...ftsTokens(t.text)];
    while (peek()?.kind === '+' && tokens[i + 1]?.kind === 'phrase') {
      lexemes.push(...ftsTokens((tokens[i + 1] as { text: string }).text));
      i += 2;
    }
    const prefix = peek()?.kind === '*';
    if (prefix) i++;
    return { op: 'phrase', lexemes, prefix };
  };
  const node = or();
  if (i < tokens.length) throw new FtsSyntaxError(`unexpected ${tokens[i]!.kind}`);
  return node;
}

type LexToken = { kind: 'phrase'; text: string } | { kind: 'OR' | 'AND' | 'NOT' | '(' | ')' | '*' | '+' };

/** FTS5's bareword characters: letters, digits, `_`, and every non-ASCII character. */
const BAREWORD = /[\p{L}\p{N}_\u0080-\u{10FFFF}]+/uy;

function lex(s: string): LexToken[] {
  const out: LexToken[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      let text = '';
      for (i++; ; i++) {
        if (i >= s.length) throw new FtsSyntaxError('a string is not closed');
        if (s[i] === '"') {
          if (s[i + 1] !== '"') break;
          i++;
        }
        text += s[i];
      }
      i++;
      out.push({ kind: 'phrase', text });
    } else if (c === '(' || c === ')' || c === '*' || c === '+') {
      out.push({ kind: c });
      i++;
    } else {
      BAREWORD.lastIndex = i;
      const m = BAREWORD.exec(s);
      if (!m) throw new FtsSyntaxError(`FTS5 syntax this translation does not take: ${JSON.stringify(s.slice(i, i + 10))}`);
      i += m[0].length;
      // FTS5's keywords are upper case only; `or` is a word.
      if (m[0] === 'OR' || m[0] === 'AND' || m[0] === 'NOT') out.push({ kind: m[0] });
      else if (s[i] === ':') throw new FtsSyntaxError('column filters are not translated');
      else out.push({ kind: 'phrase', text: m[0] });
    }
  }
  return out;
}

/** The node without `none` (a phrase without a lexeme, which matches nothing in FTS5). */
function simplify(n: FtsNode): FtsNode {
  switch (n.op) {
    case 'phrase':
      return n.lexemes.length === 0 ? { op: 'none' } : n;
    case 'or': {
      const of = n.of.map(simplify).filter((x) => x.op !== 'none');
      return of.length === 0 ? { op: 'none' } : of.length === 1 ? of[0]! : { op: 'or', of };
    }
    case 'and': {
      const of = n.of.map(simplify);
      return of.some((x) => x.op === 'none') ? { op: 'none' } : of.length === 1 ? of[0]! : { op: 'and', of };
    }
    case 'not': {
      const left = simplify(n.left);
      const right = simplify(n.right);
      return left.op === 'none' ? left : right.op === 'none' ? left : { op: 'not', left, right };
    }
    case 'none':
      return n;
  }
}

function render(n: FtsNode): string {
  switch (n.op) {
    case 'phrase': {
      const parts = n.lexemes.map((l, k) => quoteLexeme(l) + (n.prefix && k === n.lexemes.length - 1 ? ':*' : ''));
      return parts.length === 1 ? parts[0]! : `(${parts.join(' <-> ')})`;
    }
    case 'or':
      return `(${n.of.map(render).join(' | ')})`;
    case 'and':
      return `(${n.of.map(render).join(' & ')})`;
    case 'not':
      return `(${render(n.left)} & !${render(n.right)})`;
    case 'none':
      throw new Error('none is simplified away');
  }
}

/** One phrase of a query: its tsquery text, and its lexeme when it is one whole word (its count is then in the vocabulary). */
export interface FtsPhrase {
  query: string;
  term: string | null;
}

/** Every phrase of a node, in order, each once (the terms whose rarity weighs the probes' scores). */
function phrases(n: FtsNode, out: FtsPhrase[] = []): FtsPhrase[] {
  if (n.op === 'phrase') {
    const query = render(n);
    if (!out.some((p) => p.query === query)) out.push({ query, term: n.lexemes.length === 1 && !n.prefix ? n.lexemes[0]! : null });
  } else if (n.op === 'and' || n.op === 'or') for (const x of n.of) phrases(x, out);
  else if (n.op === 'not') phrases(n.left, out); // what is excluded adds nothing to a row's score
  return out;
}

/** A match expression as tsquery text, and each of its phrases; null when it can match no row. */
export function toTsquery(match: string): { query: string; phrases: FtsPhrase[] } | null {
  const n = simplify(parseFtsMatch(match));
  if (n.op === 'none') return null;
  return { query: render(n), phrases: phrases(n) };
}

/** The tsquery of one index term, or null when the text is not exactly one token (FTS5's vocabulary holds tokens only). */
export function termTsquery(term: string): string | null {
  const t = ftsTokens(term);
  return t.length === 1 && t[0] === term ? quoteLexeme(term) : null;
}
