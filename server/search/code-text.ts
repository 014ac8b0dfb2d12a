/**
 * Question understanding for pasted code: a question that is the asker's own code followed (or
 * preceded) by a sentence asking about it. The sentence says what is wanted; the code says which
 * APIs are in play, in many words that are not (keywords, the asker's own names). So the sentence
 * leads the terms (the library probe reads the first 16) and alone is embedded.
 */

/** Lines that start like code: declarations, statements, decorators, comments, markup, closing brackets, chained calls. */
const CODE_START =
  /^\s*(?:import|export|const|let|var|function|return|await|async|if|else|for|while|switch|case|class|interface|type|enum|try|catch|throw|new|@\w|\/\/|\/\*|\*|#!|<\/?[A-Za-z]|[})\]]|\.\w)/;

/** A word of prose: letters, maybe with a dotted or quoted part (`app.db`, `isn't`), and trailing punctuation. */
const PROSE_TOKEN = /^[("'`]?[A-Za-z][\w'’.-]*[)"'`]?[,.;:?!]?$/;

/** A line written as a sentence: 4+ words, most of them words, not starting like code. */
export function isProseLine(line: string): boolean {
  const t = line.trim();
  if (!t || CODE_START.test(t)) return false;
  const tokens = t.split(/\s+/);
  const words = tokens.filter((w) => PROSE_TOKEN.test(w)).length;
  return words >= 4 && words / tokens.length >= 0.75;
}

/** JavaScript and TypeScript keywords and primitive types: every code block has them, no page is about them. */
const KEYWORDS =
  /\b(?:import|from|export|default|const|let|var|function|return|async|await|if|else|for|while|do|switch|case|break|continue|new|this|class|extends|implements|interface|type|typeof|instanceof|of|try|catch|finally|throw|null|undefined|true|false|void|public|private|protected|readonly|static|as|string|number|boolean|any|unknown|never|require)\b/g;

export interface CodeQuestion {
  /** The sentences that ask. */
  prose: string;
  /** The code, without the keywords of the language. */
  code: string;
}

/**
 * Splits a question into what it asks and the code it shows, or null when it shows no code (under
 * three code lines: `how do I use c.set()?` is a question, not a paste) or asks nothing in prose.
 */
export function splitCode(text: string): CodeQuestion | null {
  const prose: string[] = [];
  const code: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim() || /^\s*```/.test(line)) continue;
    (isProseLine(line) ? prose : code).push(line.trim());
  }
  if (code.length < 3 || prose.length === 0) return null;
  return {
    prose: prose.join('\n'),
    code: code
      .join('\n')
      .replace(KEYWORDS, ' ')
      .replace(/[ \t]+/g, ' '),
  };
}
