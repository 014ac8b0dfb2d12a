/** Code language from a fence info string, and a small guess for code that came without one (PDF, DOCX). */

/** `python`, `{.python}`, `language-rust no_run`, `js title="x"` -> the first token, lower-case. */
export function normalizeFenceLanguage(info: string): string {
  const token = info.trim().split(/[\s,{}]+/).find(Boolean) ?? '';
  return token.replace(/^\./, '').replace(/^language-/, '').toLowerCase();
}

/** A conservative guess from the code's shape; 'text' when nothing is clear. */
export function guessLanguage(code: string): string {
  const c = code.trim();
  if (!c) return 'text';
  if (/^\s*[{[]/.test(c)) {
    try {
      JSON.parse(c);
      return 'json';
    } catch {
      /* not JSON */
    }
  }
  if (/^(\$ |#!\/bin\/(ba)?sh|(sudo |pip3? |npm |npx |yarn |pnpm |docker |curl |git |cd |export |apt(-get)? |brew |kubectl |python3? -m |go (get|install|run) |cargo ))/m.test(c)) return 'bash';
  if (/^\s*(def |class \w+(\(.*\))?:|from \w[\w.]* import |import \w[\w.]*(\s+as \w+)?\s*$|@\w+(\(|$)|print\()/m.test(c) && !/[;{}]\s*$/m.test(c)) return 'python';
  if (/^\s*(fn |let mut |use \w+::|impl\b|pub (fn|struct|enum)\b)/m.test(c)) return 'rust';
  if (/^\s*(package \w+|func \w+\(|import \()/m.test(c)) return 'go';
  if (/\b(interface \w+ \{|: (string|number|boolean)\b|as const\b)/.test(c) && /[;{}]/.test(c)) return 'typescript';
  if (/\b(const|let|var) \w+ = |=>|\bawait \b|\brequire\(|\bexport (default|const|function)\b|\bimport .* from ['"]|console\.log\(/.test(c)) return 'javascript';
  if (/^\s*<[a-zA-Z!?]/.test(c)) return /<\?xml/.test(c) ? 'xml' : 'html';
  if (/^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE TABLE)\b/i.test(c)) return 'sql';
  if (/^[\w.-]+:\s*(\S.*)?$/m.test(c) && /^\s+[\w-]+:/m.test(c) && !/[;{}()]/.test(c)) return 'yaml';
  return 'text';
}
