/** URL canonicalization, crawl scope and library IDs for websites. */

import picomatch from 'picomatch/posix.js';

/** Query parameters that only track visitors; they never select different content. */
const NOISE_PARAMS = /^(utm_[a-z_]+|gclid|fbclid|msclkid|mc_cid|mc_eid|_ga|_gl|ref_src|yclid|igshid)$/i;

/**
 * The canonical form of a URL: the key under which a page is crawled once.
 * Lower-case scheme and host, no default port, no fragment, no tracking parameters, sorted query,
 * `index.html` (or `index.htm`) folded into its directory, and no trailing slash (except the root).
 * Returns null for anything that is not http(s).
 */
export function canonicalKey(raw: string | URL, base?: string | URL): string | null {
  const u = toUrl(raw, base);
  if (!u) return null;
  let pathname = u.pathname.replace(/\/{2,}/g, '/');
  pathname = pathname.replace(/\/index\.html?$/i, '/');
  if (pathname.length > 1 && pathname.endsWith('/')) pathname = pathname.slice(0, -1);
  return `${u.protocol}//${u.host}${pathname}${canonicalQuery(u)}`;
}

/** The URL to fetch for a link: fragment and tracking parameters removed, otherwise as written. */
export function fetchUrl(raw: string | URL, base?: string | URL): string | null {
  const u = toUrl(raw, base);
  if (!u) return null;
  u.search = canonicalQuery(u);
  return u.href;
}

function toUrl(raw: string | URL, base?: string | URL): URL | null {
  let u: URL;
  try {
    u = new URL(typeof raw === 'string' ? raw.trim() : raw.href, base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  u.username = '';
  u.password = '';
  return u;
}

function canonicalQuery(u: URL): string {
  const params = [...u.searchParams.entries()].filter(([k]) => !NOISE_PARAMS.test(k));
  if (params.length === 0) return '';
  params.sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  return `?${new URLSearchParams(params).toString()}`;
}

export interface Scope {
  origin: string;
  /** Path prefix without trailing slash ('' for the whole host). */
  prefix: string;
  exclude: RegExp[];
}

/**
 * Default scope of a start URL: same origin, under the start URL's directory. `/docs/` and `/docs`
 * (one segment without an extension) mean `/docs/`; `/docs/intro.html` and `/docs/guide/intro` mean
 * the directory that holds them.
 */
export function scopeFor(startUrl: string, excludePatterns: string[] = []): Scope {
  const u = new URL(startUrl);
  let dir = u.pathname;
  if (!dir.endsWith('/')) {
    const segments = dir.split('/').filter(Boolean);
    const last = segments[segments.length - 1] ?? '';
    dir = segments.length === 1 && !last.includes('.') ? `${dir}/` : dir.slice(0, dir.lastIndexOf('/') + 1);
  }
  return { origin: u.origin, prefix: dir.replace(/\/+$/, ''), exclude: excludePatterns.map(patternToRegExp) };
}

/** True when a canonical key is inside the scope and matches no exclude pattern. */
export function inScope(key: string, scope: Scope): boolean {
  let u: URL;
  try {
    u = new URL(key);
  } catch {
    return false;
  }
  if (u.origin !== scope.origin) return false;
  if (scope.prefix && u.pathname !== scope.prefix && !u.pathname.startsWith(`${scope.prefix}/`)) return false;
  return !isExcluded(u, scope);
}

export function isExcluded(u: URL, scope: Scope): boolean {
  const target = `${u.pathname}${u.search}`;
  return scope.exclude.some((re) => re.test(target));
}

/**
 * Glob options for exclude patterns (picomatch). `bash`: `*` matches any run of characters, `/`
 * included (the documented meaning, as `**` does); `contains`: a pattern may match any part of the
 * path; `nonegate`: a leading `!` is an ordinary character, not "everything else"; `noextglob`:
 * `+(...)`, `@(...)` and friends are not special; `debug`: an unusable glob (`/{a`) throws instead of
 * silently matching nothing. Matching ignores case.
 */
const GLOB: picomatch.PicomatchOptions = { bash: true, contains: true, nocase: true, dot: true, nonegate: true, noextglob: true, debug: true };

/**
 * Exclude patterns match the URL path (with query) anywhere in it, ignoring case. They are globs
 * (picomatch): `*` matches any run of characters, `?` one character other than `/`, `[a-z]` a class,
 * `{a,b}` alternatives, a backslash escapes the next character; every other character, `(`, `)` and
 * `|` included, stands for itself. So `/blog/` skips every URL containing `/blog/` and `/api/*.html`
 * skips those pages. A pattern written as `/regex/` that contains a regular-expression character is
 * used as a regular expression. Throws on an invalid pattern.
 */
export function patternToRegExp(pattern: string): RegExp {
  const p = pattern.trim();
  const re = /^\/(.+)\/([imsu]*)$/.exec(p);
  if (re && /[\\^$()[\]|+?{}]/.test(re[1]!)) return new RegExp(re[1]!, re[2]);
  return picomatch.makeRe(literalGlob(p), GLOB);
}

/**
 * picomatch hands `(`, `)` and `|` to the regular expression as groups and alternation, and a
 * backslash before a letter or digit as a class (`\d`, `\b`); in a URL path pattern they are
 * literal characters, so they are escaped here (and such a backslash dropped).
 */
function literalGlob(glob: string): string {
  return glob.replace(/\\([\s\S]|$)|[()|]/g, (m, escaped: string | undefined) => {
    if (escaped === undefined) return `\\${m}`;
    if (escaped === '') throw new SyntaxError('A pattern cannot end with a backslash.');
    return /\w/.test(escaped) ? escaped : m;
  });
}

/**
 * The library ID for a site: `/websites/<slug>` where the slug is host (without `www.`), port when
 * not the default one, and path, lower-cased, with runs of other characters turned into `-`.
 */
export function libraryIdFor(startUrl: string): string {
  const u = new URL(startUrl);
  const host = u.hostname.replace(/^www\./i, '');
  const path = u.pathname.replace(/\/index\.html?$/i, '/').replace(/\.html?$/i, '');
  const raw = `${host}${u.port ? `-${u.port}` : ''}-${path}`;
  const slug = raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/g, '');
  return `/websites/${slug || 'site'}`;
}
