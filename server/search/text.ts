/**
 * Code-aware text preparation shared by indexing and querying, so both sides agree:
 * identifiers are kept whole and also split into their parts (useEffect -> use effect,
 * snake_case -> snake case, fastify.register -> fastify register).
 */
const IDENT = /[A-Za-z_$][A-Za-z0-9_$]*(?:[.:-][A-Za-z_$][A-Za-z0-9_$]*)*/g;

export function splitIdentifier(word: string): string[] {
  return word
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .map((p) => p.toLowerCase())
    .filter((p) => p.length > 0);
}

/** The text plus the parts of every compound identifier in it, for the full-text index. */
export function expandForIndex(text: string): string {
  if (!text) return '';
  const extra: string[] = [];
  for (const m of text.matchAll(IDENT)) {
    const word = m[0];
    const parts = splitIdentifier(word);
    if (parts.length > 1) extra.push(parts.join(' '));
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
