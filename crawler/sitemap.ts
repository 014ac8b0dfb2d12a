/** Sitemap reading: `<urlset>` entries and `<sitemapindex>` children (no XML library needed for this shape). */

export interface SitemapContent {
  urls: string[];
  /** Nested sitemaps of a sitemap index. */
  sitemaps: string[];
}

export function parseSitemap(xml: string): SitemapContent {
  const locs = (block: string) => [...block.matchAll(/<loc>\s*([^<]+?)\s*<\/loc>/gi)].map((m) => decodeXml(m[1]!));
  if (/<sitemapindex[\s>]/i.test(xml)) {
    const children = [...xml.matchAll(/<sitemap>([\s\S]*?)<\/sitemap>/gi)].flatMap((m) => locs(m[1]!));
    return { urls: [], sitemaps: children };
  }
  const urls = [...xml.matchAll(/<url>([\s\S]*?)<\/url>/gi)].flatMap((m) => locs(m[1]!));
  return { urls, sitemaps: [] };
}

function decodeXml(s: string): string {
  return s
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
