import type { z } from 'zod';
import type { Operation } from '../../server/contracts/operation.ts';

/**
 * Worst-case inputs for every text parameter of the HTTP API (issue 41): each shape at the longest
 * length its schema accepts. The shapes are the ones that make backtracking patterns, per-token
 * loops and n-gram expansions super-linear: one long token of one or two characters, long runs of
 * separators, dotted and pathed chains, pasted frames, brackets, unicode. Used by
 * test/bounded-work.test.ts (every request under a bound) and bench/hostile.ts (10,000 at 8 at a time).
 */

const repeat = (unit: string, n: number): string => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

/** Shapes by name: each makes a string of length n. */
export const SHAPES: Record<string, (n: number) => string> = {
  token: (n) => repeat('x', n),
  twoChars: (n) => repeat('ab', n),
  capitals: (n) => repeat('A', n),
  camel: (n) => repeat('Aa', n),
  digits: (n) => repeat('1', n),
  dotted: (n) => repeat('a.', n),
  colons: (n) => repeat('a:1', n),
  slashes: (n) => repeat('a/', n),
  dashes: (n) => repeat('a-', n),
  snake: (n) => repeat('A_', n),
  paths: (n) => repeat('/a/b.ts:1:2 ', n),
  frames: (n) => repeat('at x (y.js:1:2)\n', n),
  openParens: (n) => `at ${repeat('(', n - 4)})`,
  codeFrame: (n) => repeat(' > 1 | ', n),
  json: (n) => `{"msg":"${repeat('x', n - 10)}"}`,
  brackets: (n) => repeat('[{', n),
  addresses: (n) => repeat('https://a.b/c#d ', n),
  codes: (n) => repeat('E', n),
  headers: (n) => repeat('Error: ', n),
  spaces: (n) => `a${' '.repeat(n - 2)}b`,
  words: (n) =>
    Array.from({ length: n }, (_, i) => `w${(i * 7919) % 10007}`)
      .join(' ')
      .slice(0, n),
  question: (n) => repeat('how do I validate a request body with a schema and return errors ', n),
  accents: (n) => repeat('é', n),
  emoji: (n) => repeat('🙂', n),
  percent: (n) => repeat('%', n),
  quotes: (n) => repeat(`"'\``, n),
  hashes: (n) => repeat('#', n),
  backslashes: (n) => repeat('a\\', n),
};

/** A text parameter of an operation: where it goes and the longest value its schema accepts. */
export interface TextParameter {
  name: string;
  max: number;
  /** The schema takes a list (a repeated query parameter). */
  list: boolean;
}

interface ZodDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  shape?: Record<string, z.ZodType>;
}
const defOf = (s: z.ZodType): ZodDef => (s as unknown as { _zod: { def: ZodDef } })._zod.def;

/** The string schema under wrappers (optional, default, preprocess, arrays), with whether a list wraps it. */
function stringUnder(schema: z.ZodType, list = false): { max: number; list: boolean } | null {
  const def = defOf(schema);
  switch (def.type) {
    case 'string': {
      const max = (schema as unknown as { maxLength: number | null }).maxLength;
      return { max: max ?? 2000, list };
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
      return stringUnder(def.innerType!, list);
    case 'pipe':
      // z.preprocess(fn, s) is a pipe from a transform into s; s.transform(fn) a pipe from s.
      return defOf(def.in!).type === 'transform' ? stringUnder(def.out!, list) : stringUnder(def.in!, list);
    case 'array':
      return stringUnder(def.element!, true);
    case 'union':
      for (const o of def.options ?? []) {
        const found = stringUnder(o, list);
        if (found) return found;
      }
      return null;
    default:
      return null;
  }
}

/** The text parameters of an operation's input (top-level fields; nested objects are bodies the battery sends whole). */
export function textParameters(op: Operation): TextParameter[] {
  const def = defOf(op.input);
  const shape = def.type === 'object' ? def.shape! : {};
  const out: TextParameter[] = [];
  for (const [name, schema] of Object.entries(shape)) {
    const found = stringUnder(schema);
    if (found) out.push({ name, max: Math.min(found.max, 100_000), list: found.list });
  }
  return out;
}

export interface HostileRequest {
  label: string;
  method: string;
  path: string;
  body?: string;
  headers: Record<string, string>;
}

/**
 * Values for the other parameters of the search operations, so that a hostile value reaches the
 * search rather than a validation error about a missing one. /api/v3/search gets no library: a
 * question without one is the costliest (the libraries are picked from it).
 */
const COMPANIONS: Record<string, Record<string, string>> = {
  context: { libraryId: '/fastify/fastify', query: 'validate a request body' },
  search: { query: 'validate a request body' },
  libsSearch: { libraryName: 'fastify', query: 'validate a request body' },
};

/** One request per operation, text parameter and shape: the parameter at its longest, the others absent (or set, for searches). */
export function hostileRequests(operations: readonly Operation[], shapes: string[] = Object.keys(SHAPES)): HostileRequest[] {
  const out: HostileRequest[] = [];
  for (const op of operations) {
    if (op.http.from === 'multipart') continue; // bodies of files: test/uploads and sources-files cover them
    const pathParams = [...op.http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    for (const param of textParameters(op)) {
      for (const shapeName of shapes) {
        const value = SHAPES[shapeName]!(param.max);
        const fill = (name: string) => encodeURIComponent(name === param.name ? value : name === 'id' ? '999999' : 'x');
        // A library ID path parameter spans segments (`/api/libraries/owner/repo`): sent encoded as one.
        const pathname = op.http.path.replace(/\{(\w+)\}/g, (_, name: string) => fill(name));
        const label = `${op.id}.${param.name} ${shapeName}×${param.max}`;
        const method = op.http.method.toUpperCase();
        if (pathParams.includes(param.name)) {
          out.push({ label, method, path: pathname, headers: {} });
        } else if (op.http.from === 'query' || method === 'GET' || method === 'DELETE') {
          const q = new URLSearchParams(COMPANIONS[op.id] ?? {});
          q.set(param.name, value);
          out.push({ label, method, path: `${pathname}?${q}`, headers: {} });
        } else {
          out.push({
            label,
            method,
            path: pathname,
            body: JSON.stringify({ [param.name]: param.list ? [value] : value }),
            headers: { 'content-type': 'application/json' },
          });
        }
      }
    }
  }
  return out;
}
