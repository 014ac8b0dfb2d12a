/**
 * Code-aware text preparation shared by indexing and querying, so both sides agree:
 * identifiers are kept whole and also split into their parts (useEffect -> use effect,
 * snake_case -> snake case, fastify.register -> fastify register).
 */
const IDENT = /[A-Za-z_$][A-Za-z0-9_$]*(?:[.:-][A-Za-z_$][A-Za-z0-9_$]*)*/g;

export function splitIdentifier(word: string): string[] {
  return word
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/(?<=[A-Z])(?=[A-Z][a-z])/g, ' ')
    .split(/[^A-Za-z0-9]+/)
    .map((p) => p.toLowerCase())
    .filter((p) => p.length > 0);
}

/**
 * Tokens for an identifier written with separators, which the tokenizer would only see in pieces:
 * each member chain of two or more segments joined (`c.req.valid` -> `creqvalid`, `reqvalid`;
 * `z.url` -> `zurl`) and each snake_case segment joined (`FST_ERR_CTP_BODY_TOO_LARGE` ->
 * `fsterrctpbodytoolarge`). Rare and exact, they name an API or an error code the way the
 * question does, where its common parts (`req`, `err`, `url`) match everything.
 */
export function joinedTokens(word: string): string[] {
  if (!/[._:$-]/.test(word)) return [];
  const segments = word
    .split(/[.:]/)
    .map((seg) => seg.toLowerCase().replace(/[^a-z0-9]/g, ''))
    .filter(Boolean);
  const out = new Set<string>();
  for (const seg of word.split(/[.:]/)) if (/[_$-]/.test(seg)) out.add(seg.toLowerCase().replace(/[^a-z0-9]/g, ''));
  // Runs of two or more segments, grown one segment at a time and stopped past 64 characters
  // (longer ones are dropped below): all runs of a long dotted token would cost the cube of its length.
  for (let i = 0; i < segments.length; i++) {
    let joined = segments[i]!;
    for (let j = i + 1; j < segments.length && joined.length <= 64; j++) {
      joined += segments[j]!;
      out.add(joined);
    }
  }
  return [...out].filter((t) => t.length > 2 && t.length <= 64);
}

/** The text with the separators inside identifiers removed (`c.set(` -> `cset(`), where a question's joined tokens can be found. */
export function joinSeparated(text: string): string {
  return text.replace(/([a-z0-9])[._:$-]+(?=[a-z0-9])/gi, '$1');
}

/** The text plus the parts of every compound identifier in it, and the joined forms of separated ones, for the full-text index. */
export function expandForIndex(text: string): string {
  if (!text) return '';
  const extra: string[] = [];
  for (const m of text.matchAll(IDENT)) {
    const word = m[0];
    const parts = splitIdentifier(word);
    if (parts.length > 1) extra.push(parts.join(' '));
    extra.push(...joinedTokens(word));
  }
  return extra.length ? `${text}\n${extra.join(' ')}` : text;
}

/** Lower-case word tokens of a text with identifiers split, for feature scoring and embeddings. */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IDENT)) {
    const word = m[0];
    const parts = splitIdentifier(word);
    if (parts.length > 1) out.push(word.toLowerCase());
    out.push(...parts);
  }
  return out;
}

/**
 * Calls fn for every identifier-like word with its lower-case parts (one part when the word is
 * not compound). The embedder weighs a compound and its parts differently, so it needs to know which is which.
 */
export function eachWord(text: string, fn: (word: string, parts: string[]) => void): void {
  for (const m of text.matchAll(IDENT)) fn(m[0], splitIdentifier(m[0]));
}

/** The texts of a snippet's full-text columns; FTS5 and the term index (server/search/bm25.ts) index the same. */
export interface IndexColumns {
  title: string;
  breadcrumb: string;
  description: string;
  code: string;
  content: string;
}

/** What indexColumns reads of a snippet (an input row or a stored one). */
export interface IndexableSnippet {
  kind: 'code' | 'info';
  title: string;
  breadcrumb: string;
  pageTitle: string;
  description: string;
  content: string;
  codeList: { code: string }[] | null;
}

export function indexColumns(s: IndexableSnippet): IndexColumns {
  const breadcrumb = expandForIndex(s.breadcrumb || s.pageTitle);
  if (s.kind === 'code') {
    const code = (s.codeList ?? []).map((c) => c.code).join('\n');
    return { title: expandForIndex(s.title), breadcrumb, description: expandForIndex(s.description), code: expandForIndex(code), content: '' };
  }
  return { title: expandForIndex(s.title), breadcrumb, description: '', code: '', content: expandForIndex(s.content) };
}

const INDEX_TOKEN = /[\p{L}\p{N}]+/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const MARKS = /\p{M}+/gu;

/**
 * The tokens FTS5's `unicode61 remove_diacritics 2` tokenizer makes of a text: runs of letters and
 * digits, lower case, without diacritics. The term index uses it so that both indexes agree.
 */
export function indexTokens(text: string): string[] {
  if (!text) return [];
  const plain = NON_ASCII.test(text) ? text.normalize('NFD').replace(MARKS, '') : text;
  return plain.toLowerCase().match(INDEX_TOKEN) ?? [];
}
