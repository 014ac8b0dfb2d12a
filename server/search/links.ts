import type { Candidate } from './retrieve.ts';
import { pageOf, sectionOf } from './source-url.ts';

/**
 * Links in a snippet's text to other sections of its documentation ("see [bodyLimit](./Server.md#bodylimit)").
 * Documents link with repository-relative paths (`./Server.md#x`, `/docs/api.md#x`), site paths
 * (`/config/x`) or same-page anchors (`#x`), while snippets carry their site URLs
 * (`https://fastify.dev/docs/latest/Reference/Server/#bodylimit`). Both are reduced to the page's
 * last path segment (no extension, lower case) and the anchor, which is exact enough to tell
 * apart the few dozen candidates of one answer.
 */

const MARKDOWN_LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

export interface LinkKey {
  /** The page's last path segment, lower case, without `.md`, `.mdx` or `.html`. */
  page: string;
  /** The anchor, lower case; '' for a link to the whole page. */
  anchor: string;
}

/** `server#bodylimit` for `https://fastify.dev/docs/latest/Reference/Server/#bodylimit` and for `./Server.md#bodylimit`. */
export function linkKey(url: string): LinkKey | null {
  const section = sectionOf(url);
  const hash = section.indexOf('#');
  const path = pageOf(section).replace(/[?].*$/, '');
  const segments = path.split('/').filter((s) => s && s !== '.' && s !== '..');
  const last = segments.at(-1);
  if (!last || /^[a-z][a-z0-9+.-]*:$/i.test(last)) return null;
  const page = last.toLowerCase().replace(/\.(md|mdx|html?)$/, '');
  const anchor = hash < 0 ? '' : section.slice(hash + 1).toLowerCase();
  return page ? { page, anchor } : null;
}

/** The pages and sections a snippet's text links to, in the order it names them. */
export function linksOf(text: string, ownUrl: string): LinkKey[] {
  const own = linkKey(ownUrl);
  const ownHost = hostOf(ownUrl);
  const out: LinkKey[] = [];
  for (const m of text.matchAll(MARKDOWN_LINK)) {
    const target = m[1]!;
    if (target.startsWith('#')) {
      if (own && target.length > 1) out.push({ page: own.page, anchor: target.slice(1).toLowerCase() });
      continue;
    }
    // Absolute links to another site name its pages, not this documentation's.
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) && (ownHost === null || hostOf(target) !== ownHost)) continue;
    const key = linkKey(target);
    if (key) out.push(key);
  }
  return out;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/**
 * The first candidate at or after `from` that one of the hit's links names: the section it links
 * to, or the best-ranked candidate of a page it links to without an anchor. `keys` caches the
 * candidates' own keys across the hits of one answer.
 */
export function linkedCandidate(
  hit: Candidate,
  ranked: Candidate[],
  from: number,
  taken: Set<number>,
  keys = new Map<number, LinkKey | null>(),
): Candidate | undefined {
  const s = hit.snippet;
  const links = linksOf(`${s.description}\n${s.content}`, s.sourceId);
  if (links.length === 0) return undefined;
  const own = sectionOf(s.sourceId);
  const keyOf = (c: Candidate): LinkKey | null => {
    let key = keys.get(c.snippet.id);
    if (key === undefined) keys.set(c.snippet.id, (key = linkKey(c.snippet.sourceId)));
    return key;
  };
  const later = ranked.slice(from).filter((c) => !taken.has(c.snippet.id) && c.snippet.versionId === s.versionId && sectionOf(c.snippet.sourceId) !== own);
  for (const link of links) {
    const found = later.find((c) => {
      const key = keyOf(c);
      return key !== null && key.page === link.page && (link.anchor === '' || key.anchor === link.anchor);
    });
    if (found) return found;
  }
  return undefined;
}
