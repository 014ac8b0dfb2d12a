/**
 * Sitemap reading with fast-xml-parser: page URLs of a `<urlset>` and nested sitemaps of a
 * `<sitemapindex>`. Namespace prefixes (`<sm:loc>`), CDATA, entities (named and numeric) and
 * surrounding whitespace are handled by the parser; malformed XML yields nothing and a warning.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** The sitemap protocol's limit of entries per file; entries after it are ignored. */
export const MAX_SITEMAP_ENTRIES = 50_000;

export interface SitemapContent {
  urls: string[];
  /** Nested sitemaps of a sitemap index. */
  sitemaps: string[];
  /** Set when the document is meant to be a sitemap but cannot be read (malformed XML); it then yields nothing. */
  warning: string | null;
}

const ENTRY_PATHS = new Set(['urlset.url', 'sitemapindex.sitemap', 'urlset.url.loc', 'sitemapindex.sitemap.loc']);

const parser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  removeNSPrefix: true,
  // XML names are case-sensitive; lower-casing keeps the old reader's tolerance for `<URL><LOC>`.
  transformTagName: (name) => name.toLowerCase(),
  parseTagValue: false,
  // The five XML entities, character references (`&#38;`, `&#x26;`) and common HTML names; `<!ENTITY>` expansion stays bounded by the parser's limits.
  htmlEntities: true,
  isArray: (_name, jpath) => ENTRY_PATHS.has(String(jpath)),
});

/** A sitemap's root element, possibly with a namespace prefix: the test for "this document means to be a sitemap". */
const SITEMAP_ROOT = /<(?:[\w.-]+:)?(?:urlset|sitemapindex)[\s>/]/i;

export function parseSitemap(xml: string): SitemapContent {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    // An HTML page answered for sitemap.xml is no sitemap and not worth a warning.
    if (!SITEMAP_ROOT.test(xml)) return { urls: [], sitemaps: [], warning: null };
    const { msg, line, col } = valid.err;
    return { urls: [], sitemaps: [], warning: `malformed XML at line ${line}${col ? `, column ${col}` : ''}: ${msg}` };
  }
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(xml) as Record<string, unknown>;
  } catch (err) {
    // Well-formed but refused by the parser's limits (entity expansion, nesting).
    return { urls: [], sitemaps: [], warning: `unreadable XML: ${(err as Error).message}` };
  }
  if (isRecord(doc.sitemapindex)) return { urls: [], sitemaps: locs(doc.sitemapindex.sitemap), warning: null };
  if (isRecord(doc.urlset)) return { urls: locs(doc.urlset.url), sitemaps: [], warning: null };
  return { urls: [], sitemaps: [], warning: null };
}

/** The `<loc>` texts of the first MAX_SITEMAP_ENTRIES entries. */
function locs(entries: unknown): string[] {
  if (!Array.isArray(entries)) return [];
  return entries.slice(0, MAX_SITEMAP_ENTRIES).flatMap((entry) => {
    const loc = isRecord(entry) ? entry.loc : undefined;
    if (!Array.isArray(loc)) return [];
    return loc
      .filter((v): v is string => typeof v === 'string')
      .map((v) => v.trim())
      .filter(Boolean);
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
