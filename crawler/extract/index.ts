import { createHash } from 'node:crypto';
import type { SnippetInput } from '../../lib/model.ts';
import { parsePage, needsBrowser, type PageDocument } from './document.ts';
import { selectMain, stripNoise } from './main-content.ts';
import { createTurndown } from '../../lib/text/html-markdown.ts';
import { buildSnippets } from './snippets.ts';

export { needsBrowser } from './document.ts';

export interface ExtractedPage {
  /** Page title: `<title>` without the site-name suffix, else the first heading. */
  pageTitle: string;
  /** Site name guessed from the title suffix (`Intro - My Guide` -> `My Guide`), or null. */
  siteName: string | null;
  links: string[];
  noindex: boolean;
  nofollow: boolean;
  canonical: string | null;
  /** sha1 of the main content's normalized text: equal for the same page served under two URLs. */
  contentHash: string;
  mainTextLength: number;
  /** A "Page not found" page answered with 200 (single-page apps do this). */
  softNotFound: boolean;
  /** Server HTML that only a browser can turn into content. */
  wantsBrowser: boolean;
  snippets: SnippetInput[];
  codeBlocks: number;
  headings: number;
}

const TITLE_SEPARATORS = [' | ', ' - ', ' — ', ' – ', ' · ', ' :: '];

/** HTML of one page -> title, links, duplicate key and snippets. */
export function extractPage(html: string, pageUrl: string): ExtractedPage {
  const page: PageDocument = parsePage(html, pageUrl);
  const main = selectMain(page.document);
  const h1s = main ? [...main.querySelectorAll('h1')] : [];
  const firstHeading = main?.querySelector('h1, h2')?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
  const { pageTitle, siteName } = splitTitle(page.title, firstHeading, pageUrl);
  if (main) stripNoise(main);
  const mainText = (main?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const contentHash = createHash('sha1').update(mainText).digest('hex');
  const softNotFound = /^(404\b|page not found|not found\b)/i.test(firstHeading) || /^(404\b|page not found)/i.test(page.title);
  const result =
    main && !page.noindex && !softNotFound
      ? buildSnippets(main, { pageUrl, pageTitle, h1InTrail: h1s.length > 1, turndown: createTurndown({ baseUrl: pageUrl }) })
      : { snippets: [], codeBlocks: 0, headings: 0 };
  return {
    pageTitle,
    siteName,
    links: page.nofollow ? [] : page.links,
    noindex: page.noindex,
    nofollow: page.nofollow,
    canonical: page.canonical,
    contentHash,
    mainTextLength: mainText.length,
    softNotFound,
    wantsBrowser: needsBrowser(page, mainText.length),
    ...result,
  };
}

/** `Chapter 3: Markers - The Guide` -> page `Chapter 3: Markers`, site `The Guide`. */
export function splitTitle(title: string, firstHeading: string, pageUrl: string): { pageTitle: string; siteName: string | null } {
  const t = decodeEntities(title);
  for (const sep of TITLE_SEPARATORS) {
    const i = t.lastIndexOf(sep);
    if (i > 0) return { pageTitle: t.slice(0, i).trim(), siteName: t.slice(i + sep.length).trim() || null };
  }
  if (t) return { pageTitle: t, siteName: t };
  return { pageTitle: firstHeading || new URL(pageUrl).pathname, siteName: null };
}

function decodeEntities(s: string): string {
  return s
    .replace(/&amp;/g, '&')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}
