/**
 * Question understanding for pasted error output. A stack trace, compiler error or log line
 * pasted into a question carries a few words that matter (the message, error codes, the names it
 * quotes) in a lot of noise (frames, paths, line and column numbers, code frames' gutters,
 * timestamps, ids). reduceErrorText keeps the former, so that ranking and library selection see
 * what the error says rather than where it happened.
 */

export interface ReducedQuestion {
  /** The question with the noise of pasted output removed (the text itself when none was found). */
  text: string;
  /** Error codes it names (FST_ERR_CTP_INVALID_MEDIA_TYPE, ERR_REQUIRE_ESM, TS2322, ENOSPC), in order. */
  codes: string[];
  /** True when the text looked like pasted output (frames, paths with positions, error headers). */
  pasted: boolean;
}

/**
 * `    at fn (file:1:2)`, `at X.<computed> [as y] (node:internal/z:1:2)`, `at async Promise.all (index 0)`,
 * `at file:///x.js:3:4`. Read by parts rather than by one pattern: `at .*\((.*:\d+)\)$` backtracks in
 * the square of a line's length, and a question is up to 2,000 characters long.
 */
function isFrame(line: string): boolean {
  let t = line.trim();
  if (!/^at\s/.test(t)) return false;
  if (t.endsWith('{')) t = t.slice(0, -1).trimEnd();
  if (t.endsWith(')')) {
    const inner = t.slice(t.lastIndexOf('(') + 1, -1);
    return /:\d+(?::\d+)?$/.test(inner) || inner === '<anonymous>' || inner === 'native' || /^index \d+$/.test(inner);
  }
  return /\S:\d+(?::\d+)?$/.test(t);
}
/** Python-, Java- and Go-style frames, and the "... N more" / "-- 5 lines omitted" markers. */
const OTHER_FRAME = /^\s*(?:File ".*", line \d+|at [\w$.<>]+\([\w.]*(?::\d+)?\)|\.\.\. \d+ more|goroutine \d+|[\w./-]+\.go:\d+|-{2,} .*omitted)/;
/** A code frame line: `  12 | code`, `> 12 | code`, `    |     ^^^`. */
const CODE_FRAME = /^\s*(?:>\s*)?(?:(\d+)\s*)?\|(.*)$/;
/**
 * A path with a line (and column) position: /app/src/x.ts:12:5, src/x.ts(12,5), C:\app\x.js:3. It
 * starts where a run of path characters starts (the look-behind), so that a long run is scanned
 * once rather than once from each of its characters.
 */
const PATH_POSITION =
  /(?<![\w@.\-\\/])(?:[A-Za-z]:\\|file:\/\/\/?|webpack:\/\/\/?)?[\w@.\-\\/]*(?<=[\w-])\.[A-Za-z]{1,5}(?::\d+){1,2}|(?<![\w@.\-\\/])[\w@.\-\\/]*(?<=[\w@-])\.[A-Za-z]{1,5}\(\d+,\d+\)/g;
/** Absolute or relative file paths without positions (keep the file's base name: it can be meaningful, e.g. vite.config.ts). */
const PATH = /(?<![\w@.~-])(?:[A-Za-z]:\\|file:\/\/\/?|\/)[\w@.\-]+(?:[\\/][\w@.\-]+)+/g;
/** A web address, with or without its scheme (`https://vitest.dev/api/vi.html#vi-mock`, `fastify.dev/docs/latest/Reference/Middleware/`). */
const WEB_ADDRESS = /\b(?:https?:\/\/)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?\/[^\s'"`<>)\]]*|\bhttps?:\/\/[^\s'"`<>)\]]+/gi;

/** A web address written with its scheme. */
const SCHEMED_ADDRESS = /\bhttps?:\/\/[^\s'"`<>)\]]+/gi;

/**
 * An address an error message points to names the page about the error: its last path segment
 * and its fragment (`vi mock`, `Middleware`). The host and the rest of the path (`docs latest
 * Reference`) would match pages about links and URLs instead.
 */
function urlTopic(url: string): string {
  const [rest, fragment = ''] = url.replace(/^https?:\/\//i, '').split('#', 2);
  const segments = rest!
    .split(/[/?]/)
    .slice(1)
    .filter((x) => x && !x.includes('='));
  const last = (segments.pop() ?? '').replace(/\.(?:html?|md|mdx)$/i, '');
  return ` ${[last, fragment].filter(Boolean).join(' ').replace(/[-_]+/g, ' ')} `;
}

/** Relative paths of files without positions (`src/api/client.test.ts` in a test runner's FAIL line). */
const RELATIVE_PATH = /(?<![\w@.~\/:-])(?:\.{1,2}\/)?[\w@-][\w@.-]*(?:\/[\w@.-]+)+\.[A-Za-z]{1,5}\b/g;
/** A terminal session's lines: a shell prompt, a test runner's status marks (`✓ src/x.test.ts`, ` FAIL `, ` RUN  v5`). */
const TERMINAL = /^\s*(?:\$ \S|[✓✔✗✘×❯]\s|(?:FAIL|PASS|RUN)\s)/u;
/** Error codes: FST_ERR_X, ERR_X, TS1234, E-codes of the system (ENOENT, EADDRINUSE). */
const CODE = /\b(?:[A-Z][A-Z0-9]*_ERR(?:_[A-Z0-9]+)+|ERR(?:_[A-Z0-9]+)+|TS\d{4,5}|E[A-Z]{3}[A-Z0-9]*)\b/g;
/** `Error: message`, `TypeError [ERR_X]: message`, `FastifyError [FST_...]: message`, `error TS2322: message`. */
const HEADER = /^\s*(?:Uncaught\s+)?(?:[\w$.]*(?:Error|Exception|Warning)|error|warning|\[[\w:-]+\][\s\w]*error)(?:\s*\[[\w-]+\])?\s*:/i;
const TIMESTAMP =
  /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b|\b\d{1,2}\/\d{1,2}\/\d{2,4},?|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?(?:\s?[AP]M)?\b/g;
const NOISE_TOKENS = /\b(?:0x[0-9a-f]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|\d{5,})\b/gi;

/** Keys of JSON output (log lines, error bodies, printed issues) whose values say what went wrong; the rest (level, time, pid, hostname, ids, request details) is noise. */
const MESSAGE_KEYS = new Set([
  'msg',
  'message',
  'error',
  'err',
  'code',
  'type',
  'name',
  'reason',
  'expected',
  'received',
  'keys',
  'detail',
  'details',
  'title',
  'hint',
  'cause',
  'issues',
  'errors',
  'stack',
]);

/** The informative string values of parsed JSON output, in order. */
function jsonMessages(value: unknown, key: string | null, out: string[]): void {
  if (typeof value === 'string') {
    if (key === null || MESSAGE_KEYS.has(key)) out.push(key === 'stack' ? value.split('\n')[0]! : value);
  } else if (Array.isArray(value)) {
    for (const v of value) jsonMessages(v, key, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (key === null || MESSAGE_KEYS.has(key) || MESSAGE_KEYS.has(k)) jsonMessages(v, k, out);
  }
}

/**
 * Replaces JSON printed in the text (a pino or fastify log line, an error response body, a
 * ZodError's issues) by its informative string values: where the pasted output was JSON, the
 * message is in `msg`, `message`, `code`, and the rest is structure and noise.
 */
function replaceJson(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const start = line.search(/[{[]\s*$|^\s*[{[]/);
    if (start < 0) {
      out.push(line);
      continue;
    }
    // The shortest run of lines from here that parses as JSON (at most 200 lines).
    let parsed: { value: unknown; end: number } | null = null;
    let text = line.slice(start);
    for (let j = i; j < Math.min(lines.length, i + 200); j++) {
      if (j > i) text += `\n${lines[j]}`;
      const trimmed = text.trim();
      if (!/[}\]]$/.test(trimmed)) continue;
      try {
        parsed = { value: JSON.parse(trimmed), end: j };
        break;
      } catch {
        // Not complete yet.
      }
    }
    if (!parsed || typeof parsed.value !== 'object' || parsed.value === null) {
      out.push(line);
      continue;
    }
    const messages: string[] = [];
    jsonMessages(parsed.value, null, messages);
    const before = line.slice(0, start).trim();
    out.push([before, ...new Set(messages)].filter(Boolean).join(' '));
    i = parsed.end;
  }
  return out;
}

/** The text of a line without paths, positions, timestamps and ids. */
function clean(line: string): string {
  return line
    .replace(WEB_ADDRESS, (m) => urlTopic(m))
    .replace(TIMESTAMP, ' ')
    .replace(PATH_POSITION, (m) => baseName(m.replace(/(?<![:\d])(?::\d+)+$|\(\d+,\d+\)$/, '')))
    .replace(PATH, (m) => baseName(m))
    .replace(RELATIVE_PATH, (m) => baseName(m))
    .replace(NOISE_TOKENS, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Source files of the asker's own project (auth.ts, useProducts.ts, client.test.ts): their names
 * say nothing about the library and their parts match unrelated pages (`auth` -> bearer-auth).
 * Configuration files (vite.config.ts, .eslintrc.js) do name what the documents explain.
 */
const SOURCE_FILE = /\.(?:[cm]?[jt]sx?|vue|svelte|astro|py|rb|go|rs|java|kt|cs|php|swift|dart|exs?)$/i;
const CONFIG_FILE = /(?:^|[.-])(?:config|rc)(?:[.-]|$)|^\./i;

/** A file's base name, kept only when it says something (vite.config.ts, package.json), not index.js or the project's own sources. */
function baseName(p: string): string {
  const name = p.split(/[\\/]/).pop() ?? '';
  // A directory (`/home/ci/image-service`) or one of the project's own sources says nothing.
  if (!name.includes('.') || (SOURCE_FILE.test(name) && !CONFIG_FILE.test(name))) return ' ';
  return /^(?:index|main|app|server|bundle|chunk)\.\w+$|^[\w-]{0,2}\.\w+$/i.test(name) ? ' ' : ` ${name} `;
}

/**
 * Reduces pasted error output to what identifies the error. Lines of stack frames are dropped
 * (library selection reads the question as asked, so a `node_modules/fastify/` path still names
 * its library), code frames keep their code without
 * the gutter, every other line loses its paths, positions, timestamps and ids. Text that does not
 * look pasted comes back unchanged but for the addresses it quotes with their scheme.
 */
export function reduceErrorText(input: string): ReducedQuestion {
  const raw = input.split(/\r?\n/);
  const lines = replaceJson(raw);
  const json = lines.length !== raw.length || lines.some((l, i) => l !== raw[i]);
  const codes = [...new Set([...input.matchAll(CODE)].map((m) => m[0]))];
  let frames = 0;
  let headers = 0;
  let positions = 0;
  let terminal = 0;
  const kept: string[] = [];
  for (const line of lines) {
    if (isFrame(line) || OTHER_FRAME.test(line)) {
      frames++;
      continue;
    }
    if (HEADER.test(line)) headers++;
    if (TERMINAL.test(line)) terminal++;
    positions += (line.match(PATH_POSITION) ?? []).length;
    const frame = CODE_FRAME.exec(line);
    if (frame && (frame[1] !== undefined || /^\s*[\^~]+\s*$/.test(frame[2] ?? ''))) {
      const code = (frame[2] ?? '').trim();
      if (code && !/^[\^~\s]+$/.test(code)) kept.push(code);
      continue;
    }
    // Carets and tildes under a code line, compiler summaries.
    if (/^\s*[\^~]+\s*$/.test(line) || /^\s*Found \d+ errors?\b/.test(line)) continue;
    const c = clean(line.replace(/^\s*\d+\s{2,}/, ''));
    if (c) kept.push(c);
  }
  const pasted = frames > 0 || positions > 0 || json || (headers > 0 && codes.length > 0) || (lines.length > 3 && (headers > 0 || terminal > 1));
  // A question that quotes an address ("what does https://fastify.dev/docs/latest/Reference/Server/#trustproxy
  // do") asks about the page it names, as an error message's address does; only an address with its
  // scheme is taken for one here (`z.object/z.string` in a question is not an address).
  if (!pasted) return { text: input.replace(SCHEMED_ADDRESS, (m) => urlTopic(m)), codes, pasted: false };
  // Repeated lines (the same warning printed for every file) count once.
  const text = [...new Set(kept)].join('\n');
  return { text: text || input, codes, pasted: true };
}
