/** Picks the main content element of a documentation page and strips what is not documentation. */

const MAIN_SELECTORS = [
  'main',
  '[role="main"]',
  'article',
  '.markdown-body',
  '.theme-doc-markdown',
  '.rst-content [itemprop="articleBody"]',
  '.rst-content',
  '#content',
  '.content',
  '#main',
  '.main',
  '.document',
  '.docs-content',
  '.post-content',
];

/** Navigation, page chrome, menus, search, theme pickers, cookie banners, and mdBook/Docusaurus/Sphinx widgets. */
const NOISE_SELECTORS = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'form',
  'button',
  'input',
  'select',
  'textarea',
  'svg',
  'canvas',
  'img',
  'picture',
  'video',
  'audio',
  'nav',
  'footer',
  'aside',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="search"]',
  '[role="menu"]',
  '[role="dialog"]',
  '[hidden]',
  '.hidden',
  '.sr-only',
  '.visually-hidden',
  '.skip-link',
  '[id*="cookie"]',
  '[class*="cookie"]',
  '[id*="consent"]',
  '[class*="consent"]',
  '[class*="gdpr"]',
  '#mdbook-help-container',
  '#mdbook-menu-bar',
  '.menu-bar',
  '#mdbook-search-wrapper',
  '.searchbar-outer',
  '.theme-popup',
  '.nav-chapters',
  '.mobile-nav-chapters',
  '.sidebar',
  '#sidebar',
  '.toc',
  '#toc',
  '.breadcrumbs',
  '.breadcrumb',
  '.pagination-nav',
  '.pager',
  '.edit-this-page',
  '.headerlink',
  '.hash-link',
  '.anchorjs-link',
  '.theme-edit-this-page',
  '.feedback',
  '.copy-button',
  '.clipboard',
];

export function selectMain(document: Document): Element | null {
  let best: Element | null = null;
  for (const sel of MAIN_SELECTORS) {
    const found = [...document.querySelectorAll(sel)];
    for (const el of found) {
      if (textLength(el) < 50) continue;
      if (!best || (sel === 'main' && textLength(el) > textLength(best))) best = el;
    }
    if (best) return best;
  }
  return document.body;
}

/** Removes noise inside the main element (in place). Headers stay when they hold the page heading. */
export function stripNoise(main: Element): void {
  for (const sel of NOISE_SELECTORS) {
    for (const el of main.querySelectorAll(sel)) {
      if (el.closest('pre')) continue;
      el.remove();
    }
  }
  for (const header of main.querySelectorAll('header')) {
    if (!header.querySelector('h1, h2, h3')) header.remove();
  }
}

function textLength(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, ' ').trim().length;
}
