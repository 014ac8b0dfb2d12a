import type { Library } from '../../lib/model.ts';
import { normalizeName, type NameKey } from './names.ts';
import { TUNING } from './tuning.ts';
import { STOPWORDS } from './stopwords.ts';

/**
 * A library's package names as names of the library: TanStack Query's documents install
 * `@tanstack/react-query`, and people call the library "React Query". The `search-model` job lists
 * the packages a version's documents tell you to install (`installedPackages`); the catalogue
 * makes a library's names of those whose own name contains a word of the library's name
 * (`packageNameKeys`), so "install react query" names TanStack Query while Hono's `npm i zod`
 * does not name Hono.
 */

/** An install command and its arguments up to the end of the command. */
const INSTALL =
  /(?:^|[\s`$>(])(?:npm\s+(?:i|install|add)|pnpm\s+(?:add|i|install)|yarn\s+(?:global\s+)?add|bun\s+(?:add|i|install)|deno\s+add)\s+([^\n`;&|#)]+)/g;
/** An npm package name, scoped or not, with an optional version or tag. */
const PACKAGE = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?(?:@[\w.^~<>=*-]+)?$/;
/** Packages kept per version: a monorepo's documents install many, a question names few. */
const MAX_PACKAGES = 300;

/** The packages install commands in a text add, without versions (`@tanstack/react-query@5` -> `@tanstack/react-query`). */
export function installedPackages(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(INSTALL)) {
    for (const arg of m[1]!.trim().split(/\s+/)) {
      if (arg.startsWith('-')) continue;
      const a = arg.replace(/^['"]|['"]$/g, '').toLowerCase();
      // A sentence, not arguments: "# re-running npm install on every code change".
      if (!PACKAGE.test(a) || STOPWORDS.has(a)) break;
      const at = a.indexOf('@', 1);
      out.push(at > 0 ? a.slice(0, at) : a);
    }
  }
  return out;
}

/** Collects the packages of many texts, sorted and capped (what the model stores). */
export class PackageList {
  private readonly seen = new Set<string>();

  /** Code is read whole; prose (`info`) only inside code spans (`npm i pino-http`), not its sentences ("npm install on every change"). */
  add(text: string, kind: 'code' | 'info'): void {
    const code = kind === 'code' ? text : (text.match(/`[^`\n]+`/g) ?? []).join('\n');
    for (const p of installedPackages(code)) if (this.seen.size < MAX_PACKAGES) this.seen.add(p);
  }

  list(): string[] {
    return [...this.seen].sort();
  }
}

/** The words of a library's own name (title and repository), which a package name must contain to be one of its names. */
function nameWords(library: Pick<Library, 'id' | 'title'>): Set<string> {
  const repo = library.id.split('/')[2] ?? '';
  const words = `${library.title} ${repo}`
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && w !== 'docs' && w !== 'website' && w !== 'com');
  return new Set(words.flatMap((w) => (w.length > 4 && w.endsWith('js') ? [w, w.slice(0, -2)] : [w])));
}

/**
 * The names a library's installed packages give it: a package whose scope, if any, is the
 * library's owner or name, and whose own name has more than one part, one of them a word of the
 * library's name (`react-query` for TanStack Query, `pino-http` for Pino; `@hono/zod-validator`
 * is not Zod's, `@fastify/cors` is left to the scope rule). Matched exactly, never with typos.
 */
export function packageNameKeys(library: Pick<Library, 'id' | 'title'>, packages: readonly string[]): NameKey[] {
  const words = nameWords(library);
  const owner = normalizeName(library.id.split('/')[1] ?? '');
  const out = new Map<string, NameKey>();
  for (const p of packages) {
    const slash = p.indexOf('/');
    const scope = slash > 0 ? normalizeName(p.slice(1, slash)) : null;
    if (scope !== null && scope !== owner && !words.has(scope)) continue;
    const parts = p
      .slice(slash + 1)
      .split(/[-_.]+/)
      .filter(Boolean);
    if (parts.length < 2 || !parts.some((x) => words.has(x))) continue;
    const key = normalizeName(parts.join(''));
    out.set(key, { key, weight: TUNING.names.weights.package, fuzzy: false });
  }
  return [...out.values()];
}
