/**
 * Code block language, shared by the crawler and the source importers (HTML, markdown, PDF, DOCX):
 * declared in a class or fence info string when the page says, otherwise guessed from the code.
 * Names are normalized through one alias table so `js`, `language-js` and a guess all store `javascript`.
 */

const ALIASES: Record<string, string> = {
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'jsx',
  ts: 'typescript',
  tsx: 'tsx',
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'bash',
  shellsession: 'bash',
  py: 'python',
  python3: 'python',
  rb: 'ruby',
  yml: 'yaml',
  rs: 'rust',
  'c++': 'cpp',
  cs: 'csharp',
  'c#': 'csharp',
  kt: 'kotlin',
  md: 'markdown',
  htm: 'html',
  xhtml: 'html',
  plaintext: 'text',
  txt: 'text',
  none: 'text',
  ps1: 'powershell',
  golang: 'go',
  dockerfile: 'dockerfile',
  docker: 'dockerfile',
};

/** Highlighter prefixes that mark a class token (or fence word) as a language name: `language-rust`, `lang-js`, `brush-py`. */
const PREFIX = /^(?:language|lang|highlight|hljs-lang|brush:?)-/i;

/** `JS` -> `javascript`, `rust,` -> `rust`: lower case, trailing separators dropped, aliases resolved. */
export function normalizeLanguage(name: string): string {
  const n = name.toLowerCase().replace(/[,;]+$/, '');
  return ALIASES[n] ?? n;
}

/** Language from an element's classes, or null when none declares one (`hljs`, `playground`). `language-rust no_run` -> rust. */
export function languageFromClass(className: string | null | undefined): string | null {
  if (!className) return null;
  for (const token of className.split(/\s+/)) {
    if (!PREFIX.test(token)) continue;
    const name = token.replace(PREFIX, '');
    // Only name-like tokens: `language-{{lang}}` from an unrendered template says nothing.
    if (/^[A-Za-z0-9_+#.-]+$/.test(name)) return normalizeLanguage(name);
  }
  return null;
}

/** Language from a fence info string, or null when it is empty: `python`, `{.python}`, `language-rust no_run`, `js title="x"`. */
export function languageFromFence(info: string): string | null {
  const token =
    info
      .trim()
      .split(/[\s,{}]+/)
      .find(Boolean) ?? '';
  const name = token.replace(/^\./, '').replace(PREFIX, '');
  return name ? normalizeLanguage(name) : null;
}

/** A prompt, a shebang, or a line starting with a common command (`export NAME=` only: `export default` is JavaScript). */
const SHELL = new RegExp(
  [
    /^\$\s/,
    /^#!\/(usr\/)?bin\/(env\s+)?(ba|z)?sh\b/,
    /^(npm|npx|yarn|pnpm|pip3?|cargo|git|docker|kubectl|curl|apt(-get)?|brew|make|cd|ls|sudo)\s/,
    /^export\s+\w+=/,
    /^python3?\s+-m\s/,
    /^go\s+(get|install|run)\s/,
  ]
    .map((r) => r.source)
    .join('|'),
  'm',
);

/** `import x` must be the whole line: `import got from 'got'` is JavaScript. */
const PYTHON =
  /^\s*(def\s+\w+|class\s+\w+(\(.*\))?:|class\s+\w.*:\s*$|from\s+\w[\w.]*\s+import\s|import\s+\w[\w.]*(\s+as\s+\w+)?(\s*,\s*\w[\w.]*(\s+as\s+\w+)?)*\s*$|@\w+(\(|$)|print\()/m;

/** Declarations, paths (`std::fs`), attributes, macros (`println!(`) and the `?` operator. */
const RUST =
  /\bfn\s+\w+\s*[(<]|\blet\s+mut\b|\bimpl\b.*\{|^\s*impl\b|::\w+|\buse\s+\w+::|\buse\s+[\w:]+;|^\s*pub\s+(fn|struct|enum)\b|#!?\[\w+|\b(println|eprintln|print|eprint|format|panic|assert(_eq|_ne)?|write(ln)?|vec)!\s*[([]|\)\?;/m;

const TYPESCRIPT = /\b(interface|type)\s+\w+\s*[={<]|\bas const\b/;

const JAVASCRIPT =
  /\b(const|let|var|function)\s+\w+|=>|(?<![.\w])await\s|\brequire\(|\bexport\s+(default|const|function)\b|\bimport\s.+\sfrom\s|console\.log\(/;

/**
 * A cheap guess for code that declares no language; 'text' when nothing fits. Order matters: the
 * stricter shapes (JSON that parses, shell prompts, markup) come before the looser keyword checks,
 * and Python (which refuses lines ending in `;{}`) before the C-like languages.
 */
export function guessLanguage(code: string): string {
  const s = code.trim();
  if (!s) return 'text';
  if (/^[[{]/.test(s) && /[\]}]$/.test(s) && parsesAsJson(s)) return 'json';
  if (SHELL.test(s)) return 'bash';
  if (/^<\?xml\b/.test(s)) return 'xml';
  if (/^<(!doctype|html|div|head|body|span|p|a|script|template)\b/i.test(s)) return 'html';
  // Python ends no line in `;{}` (its `#` comments may).
  if (PYTHON.test(s) && !/^(?!\s*#).*[;{}]\s*$/m.test(s)) return 'python';
  if (RUST.test(s)) return 'rust';
  if (/^\s*(package\s+\w+|func\s+\w+\(|import \()/m.test(s) || /\bfunc\s+\w+\(|:=/.test(s)) return 'go';
  if (TYPESCRIPT.test(s) || (/:\s*(string|number|boolean)\b/.test(s) && (/[;{}()=]/.test(s) || !looksLikeYaml(s)))) return 'typescript';
  if (JAVASCRIPT.test(s)) return 'javascript';
  if (/^<[a-zA-Z!]/.test(s)) return 'html';
  if (/^(SELECT|INSERT|UPDATE|DELETE)\b|^CREATE\s/i.test(s)) return 'sql';
  if (/^\s*\[[\w.-]+\]\s*$/m.test(s) && /^\s*[\w.-]+\s*=\s*/m.test(s)) return 'toml';
  if (looksLikeYaml(s)) return 'yaml';
  if (/^\s*[.#]?[\w-]+\s*\{[^}:]*:[^}]*\}/m.test(s)) return 'css';
  return 'text';
}

/** `key: value` lines plus a list item or a block key, or a top-level key over indented keys with no code punctuation. */
function looksLikeYaml(s: string): boolean {
  const withListOrBlock = /^\s*[\w-]+:\s+\S/m.test(s) && /^\s*-\s+\S|^\s*[\w-]+:\s*$/m.test(s);
  const nested = /^[\w.-]+:\s*(\S.*)?$/m.test(s) && /^\s+[\w-]+:/m.test(s) && !/[;{}()]/.test(s);
  return withListOrBlock || nested;
}

function parsesAsJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
