import { parseHTML } from 'linkedom';

/** A parsed page: what the crawler needs besides the content (title, links, robots meta, canonical). */
export interface PageDocument {
  document: Document;
  /** `<title>` text, trimmed. */
  title: string;
  /** Absolute link targets from `<a href>` anywhere on the page (navigation included), `rel=nofollow` excluded. */
  links: string[];
  noindex: boolean;
  nofollow: boolean;
  canonical: string | null;
  /** Text length of the body without scripts, styles and noscript. */
  bodyTextLength: number;
  scriptCount: number;
  /** The page says it needs JavaScript (an empty app root, or a noscript note). */
  looksLikeAppShell: boolean;
}

export function parsePage(html: string, pageUrl: string): PageDocument {
  const { document } = parseHTML(html) as unknown as { document: Document };
  const baseHref = document.querySelector('base[href]')?.getAttribute('href');
  let base = pageUrl;
  if (baseHref) {
    try {
      base = new URL(baseHref, pageUrl).href;
    } catch {
      /* keep the page URL */
    }
  }
  const links: string[] = [];
  for (const a of document.querySelectorAll('a[href]')) {
    if (/\bnofollow\b/i.test(a.getAttribute('rel') ?? '')) continue;
    const href = a.getAttribute('href')!.trim();
    if (!href || href.startsWith('#') || /^(javascript|mailto|tel|data):/i.test(href)) continue;
    try {
      links.push(new URL(href, base).href);
    } catch {
      /* unparsable link */
    }
  }
  const robots = [...document.querySelectorAll('meta[name]')]
    .filter((m) => /^(robots|stackscrawler)$/i.test(m.getAttribute('name') ?? ''))
    .map((m) => (m.getAttribute('content') ?? '').toLowerCase())
    .join(',');
  const canonicalHref = document.querySelector('link[rel="canonical"][href]')?.getAttribute('href');
  let canonical: string | null = null;
  if (canonicalHref) {
    try {
      canonical = new URL(canonicalHref, base).href;
    } catch {
      canonical = null;
    }
  }
  const scriptCount = document.querySelectorAll('script').length;
  const body = document.body;
  let bodyText = '';
  if (body) {
    const clone = body.cloneNode(true) as HTMLElement;
    for (const el of clone.querySelectorAll('script, style, noscript, template')) el.remove();
    bodyText = (clone.textContent ?? '').replace(/\s+/g, ' ').trim();
  }
  const noscript = [...document.querySelectorAll('noscript')].some((n) => /javascript/i.test(n.textContent ?? ''));
  const emptyRoot = [...document.querySelectorAll('#app, #root, #__next, #__nuxt, [data-reactroot], app-root')].some(
    (el) => (el.textContent ?? '').trim().length === 0,
  );
  return {
    document,
    title: (document.querySelector('title')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
    links,
    noindex: /\b(noindex|none)\b/.test(robots),
    nofollow: /\b(nofollow|none)\b/.test(robots),
    canonical,
    bodyTextLength: bodyText.length,
    scriptCount,
    looksLikeAppShell: noscript || emptyRoot,
  };
}

/**
 * Whether server HTML is worth rendering in the browser: it has scripts and either says it needs
 * JavaScript or carries almost no text. Pages without scripts gain nothing from a browser.
 */
export function needsBrowser(page: PageDocument, mainTextLength: number): boolean {
  if (page.scriptCount === 0) return false;
  if (page.looksLikeAppShell && mainTextLength < 1500) return true;
  return mainTextLength < 200;
}
