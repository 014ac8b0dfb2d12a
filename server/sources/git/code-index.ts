import path from 'node:path';
import type { CodeSnippetInput } from '../../../lib/model.ts';

/**
 * The dynamic source-code index of a repository (docs/git.md): what its source says when its
 * documentation does not. Per file: the module header (the leading doc comment, docstring or
 * package comment) with the list of what the module exports, and each exported function, class,
 * interface or type with its doc comment and its first lines. Patterns per language, not a
 * parser: it finds declarations at the start of a line, which is how nearly all code is written.
 * Every snippet is isDynamic with its repository-relative sourceFile.
 */
export const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.py', '.go', '.rs', '.java', '.kt'] as const;

type Lang = 'js' | 'py' | 'go' | 'rs' | 'java';

const LANGUAGE: Record<Lang, string> = { js: 'typescript', py: 'python', go: 'go', rs: 'rust', java: 'java' };
/** Declarations worth indexing: [pattern, kind] (the first group that is a word is the name), or [a function that returns the name, kind]. */
const DECLARATIONS: Record<Lang, [RegExp | ((line: string) => string | null), string][]> = {
  js: [
    [/^export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)/, 'function'],
    [/^export\s+(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/, 'class'],
    [/^export\s+(?:declare\s+)?(?:const|let)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:\(|function|<|[A-Za-z_$][\w$]*\s*=>)/, 'function'],
    [/^export\s+(?:declare\s+)?(?:interface|type|enum)\s+([A-Za-z_$][\w$]*)/, 'type'],
  ],
  py: [
    [/^(?:async\s+)?def\s+([A-Za-z]\w*)\s*\(/, 'function'],
    [/^class\s+([A-Za-z]\w*)/, 'class'],
  ],
  go: [
    [/^func\s+(?:\([^)]*\)\s*)?([A-Z]\w*)\s*[[(]/, 'function'],
    [/^type\s+([A-Z]\w*)\s+(?:struct|interface)\b/, 'type'],
  ],
  rs: [
    [/^\s*pub\s+(?:async\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)/, 'function'],
    [/^\s*pub\s+(?:struct|enum|trait)\s+([A-Za-z_]\w*)/, 'type'],
  ],
  java: [
    [/^\s*public\s+(?:static\s+|final\s+|abstract\s+|sealed\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*)/, 'class'],
    [javaMethod, 'method'],
    [/^(?:fun|class|object|interface)\s+(?:<[^>]+>\s+)?([A-Za-z_]\w*)/, 'function'],
  ],
};
const MAX_LINES = 30;
const MAX_PER_FILE = 60;

function langOf(file: string): Lang | null {
  const ext = path.posix.extname(file).toLowerCase();
  if (['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'].includes(ext)) return 'js';
  if (ext === '.py') return 'py';
  if (ext === '.go') return 'go';
  if (ext === '.rs') return 'rs';
  if (ext === '.java' || ext === '.kt') return 'java';
  return null;
}

/** The dynamic snippets of one source file; `url(line)` is the file's address in the host's web UI at that line. */
export function sourceSnippets(file: string, text: string, url: (line: number | null) => string): CodeSnippetInput[] {
  const lang = langOf(file);
  if (!lang || text.includes('\u0000')) return [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const language =
    path.posix.extname(file) === '.js' || path.posix.extname(file) === '.mjs' || path.posix.extname(file) === '.cjs' ? 'javascript' : LANGUAGE[lang];
  const base = { kind: 'code' as const, language, pageTitle: file, breadcrumb: `Source > ${file}`, isDynamic: true, sourceFile: file };
  const out: CodeSnippetInput[] = [];
  const signatures: string[] = [];
  for (let i = 0; i < lines.length && out.length < MAX_PER_FILE; i++) {
    const decl = declarationAt(lang, lines[i]!);
    if (!decl || decl.name.startsWith('_') || (lang === 'py' && /^\s/.test(lines[i]!))) continue;
    const doc = lang === 'py' ? docstringAfter(lines, i) : commentBefore(lines, i);
    const code = blockAt(lang, lines, i, doc.start);
    signatures.push(lines[i]!.trim().replace(/(?<!\s)\s*[{:]\s*$/, '')); // (?<!\s): tried from every blank, a long run took its square
    const title = decl.kind === 'function' || decl.kind === 'method' ? `${decl.name}()` : `${decl.kind === 'type' ? 'type' : 'class'} ${decl.name}`;
    out.push({
      ...base,
      sourceId: url(i + 1),
      title,
      description: doc.text || `Exported ${decl.kind} ${decl.name} of ${file}.`,
      codeList: [{ language, code }],
    });
  }
  const header = moduleHeader(lang, lines);
  if (header && (signatures.length || header.length > 40)) {
    const code = signatures.length ? signatures.join('\n') : lines.slice(0, MAX_LINES).join('\n');
    out.unshift({ ...base, sourceId: url(null), title: `module ${file}`, description: header, codeList: [{ language, code }] });
  }
  return out;
}

function declarationAt(lang: Lang, line: string): { name: string; kind: string } | null {
  for (const [match, kind] of DECLARATIONS[lang]) {
    const name = typeof match === 'function' ? match(line) : match.exec(line)?.[1];
    if (name) return { name, kind };
  }
  return null;
}

/**
 * The name of a public Java method (`public static <T> Map<K, V> name(`): the word before the first
 * `(`, after whitespace, with a type (modifiers and type parameters included) before it. Read by
 * parts: as one pattern, a type that may hold spaces followed by the whitespace before the name
 * backtracked over long runs of spaces and words.
 */
function javaMethod(line: string): string | null {
  const head = /^\s*public\s([^(]*)\(/.exec(line);
  if (!head) return null;
  const signature = head[1]!.trim();
  const name = /(?<=\s)[a-z_]\w*$/.exec(signature);
  if (!name) return null;
  const type = signature.slice(0, name.index).trim();
  return /^(?:[\w\s]*<[^>]+>\s)?[\w.<>[\],?\s]+$/.test(type) ? name[0] : null;
}

/** The doc comment right above a declaration (decorators and annotations skipped): its text and first line. */
function commentBefore(lines: string[], at: number): { text: string; start: number } {
  let j = at - 1;
  while (j >= 0 && /^\s*@/.test(lines[j]!)) j--;
  const end = j;
  if (j >= 0 && /\*\/\s*$/.test(lines[j]!)) {
    while (j >= 0 && !/^\s*\/\*/.test(lines[j]!)) j--;
    if (j < 0) return { text: '', start: at };
    return { text: cleanComment(lines.slice(j, end + 1)), start: j };
  }
  while (j >= 0 && /^\s*\/\/[/!]?/.test(lines[j]!)) j--;
  return j < end ? { text: cleanComment(lines.slice(j + 1, end + 1)), start: j + 1 } : { text: '', start: at };
}

/** A Python docstring: the string literal that opens the body. */
function docstringAfter(lines: string[], at: number): { text: string; start: number } {
  let j = at;
  while (j < lines.length && !/:\s*(#.*)?$/.test(lines[j]!)) j++;
  const first = lines[j + 1]?.trim() ?? '';
  const q = /^[rubf]*("""|''')/i.exec(first)?.[1];
  if (!q) return { text: '', start: at };
  const body: string[] = [first.replace(/^[rubf]*("""|''')/i, '')];
  for (let k = j + 2; k < lines.length && !body[body.length - 1]!.includes(q); k++) body.push(lines[k]!.trim());
  return { text: body.join('\n').split(q)[0]!.trim(), start: at };
}

function cleanComment(lines: string[]): string {
  return lines
    .map((l) =>
      l
        .trim()
        .replace(/^\/\*\*?|\*\/$|^\*\s?|^\/\/[/!]?\s?/g, '')
        .trim(),
    )
    .filter((l, i, all) => l || (i > 0 && all[i - 1]))
    .join('\n')
    .trim();
}

/** The declaration with its doc comment and up to MAX_LINES of its body (braces, or Python's indentation). */
function blockAt(lang: Lang, lines: string[], at: number, docStart: number): string {
  const out = lines.slice(docStart, at);
  let depth = 0;
  let opened = false;
  for (let k = at; k < lines.length && k < at + MAX_LINES; k++) {
    const l = lines[k]!;
    if (lang === 'py' && k > at && l.trim() && !/^\s/.test(l)) break;
    out.push(l);
    if (lang === 'py') continue;
    for (const ch of l.replace(/(["'`])(?:\\.|(?!\1).)*\1/g, '')) {
      if (ch === '{') {
        depth++;
        opened = true;
      } else if (ch === '}') depth--;
    }
    if ((opened && depth <= 0) || (!opened && /;\s*$/.test(l))) return out.join('\n');
  }
  return `${out.join('\n').trimEnd()}\n${lang === 'py' ? '    ...' : '  // ...'}`;
}

/** The module's leading documentation: a top doc comment, a Python module docstring, a Go package comment, Rust `//!` lines. */
function moduleHeader(lang: Lang, lines: string[]): string {
  let i = 0;
  while (i < lines.length && (!lines[i]!.trim() || /^#!|^['"]use (strict|client|server)['"]/.test(lines[i]!.trim()))) i++;
  if (lang === 'py') {
    const q = /^[rubf]*("""|''')/i.exec(lines[i]?.trim() ?? '')?.[1];
    if (!q) return '';
    const doc = docstringAfter(['x:', ...lines.slice(i)], 0);
    return doc.text;
  }
  if (lang === 'rs') {
    let j = i;
    while (j < lines.length && /^\s*\/\/!/.test(lines[j]!)) j++;
    return cleanComment(lines.slice(i, j));
  }
  const start = lines[i] ?? '';
  if (/^\s*\/\*/.test(start)) {
    let j = i;
    while (j < lines.length && !/\*\/\s*$/.test(lines[j]!)) j++;
    const text = cleanComment(lines.slice(i, j + 1));
    return /copyright|license/i.test(text) && text.length < 400 ? '' : text;
  }
  if (/^\s*\/\//.test(start)) {
    let j = i;
    while (j < lines.length && /^\s*\/\//.test(lines[j]!)) j++;
    if (lang === 'go' || (lines[j] ?? '').trim() === '' || j - i >= 2) return cleanComment(lines.slice(i, j));
  }
  return '';
}
