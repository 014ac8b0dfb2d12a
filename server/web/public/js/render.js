// Answers as the API returns them. Snippet text is markdown written by whoever published the
// documentation: it is rendered by marked and sanitized by DOMPurify (both served from this
// instance, under /vendor) before it is shown.
/* global marked, DOMPurify */
import { $, el, copyButton, setStatus } from './core.js';

/** An http(s) URL, or null: only those become links. */
export function webUrl(href, base) {
  try {
    const u = new URL(href, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

// Links in rendered markdown: relative ones resolved against the snippet's source page, anything
// but http(s) dropped, all opened in a new tab without handing this page to the target.
let linkBase = location.href;
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A' || !node.hasAttribute('href')) return;
  const href = webUrl(node.getAttribute('href'), linkBase);
  if (!href) return node.removeAttribute('href');
  node.setAttribute('href', href);
  node.setAttribute('target', '_blank');
  node.setAttribute('rel', 'noopener noreferrer');
});

export function markdown(text, base) {
  linkBase = base ?? location.href;
  const box = el('div', undefined, 'prose');
  box.innerHTML = DOMPurify.sanitize(marked.parse(text, { gfm: true, async: false }), { FORBID_TAGS: ['style', 'form', 'input', 'button'] });
  return box;
}

export function codeBlock(example) {
  const figure = el('figure', undefined, 'code');
  const caption = el('figcaption');
  caption.append(el('span', example.language || 'text', 'lang'), copyButton(example.code));
  const pre = el('pre');
  pre.append(el('code', example.code));
  figure.append(caption, pre);
  return figure;
}

export function sourceLink(source) {
  const url = webUrl(source);
  if (!url) return el('span', source);
  const a = el('a', source);
  a.href = url;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  return a;
}

export function snippetCard(s) {
  const card = el('article');
  const source = s.codeId ?? s.pageId ?? s.source ?? '';
  card.append(el('h3', s.codeTitle ?? s.breadcrumb ?? s.title ?? (source || 'Documentation')));
  const meta = el('div', undefined, 'meta');
  if (s.libraryId) meta.append(el('span', s.libraryId), ' · ');
  meta.append(sourceLink(source));
  card.append(meta);
  const text = s.codeDescription ?? s.content ?? s.text;
  if (text) card.append(markdown(text, webUrl(source) ?? undefined));
  for (const c of s.codeList ?? s.code ?? []) card.append(codeBlock(c));
  return card;
}

export function showAnswer(body, resultsId, statusId, headers, picked = false) {
  const snippets = [...body.codeSnippets, ...body.infoSnippets];
  const reason = headers.get('x-stacks-search-reason');
  // Which libraries (and versions) answered: a search picks them from the question when none is named.
  const libraries = [...new Set(snippets.map((s) => s.libraryId).filter(Boolean))];
  const from = libraries.length ? ` from ${libraries.join(', ')}${picked ? ' (picked from the question)' : ''}` : '';
  setStatus(statusId, `${snippets.length} snippet${snippets.length === 1 ? '' : 's'}${from}${reason ? ` (${reason})` : ''}`);
  $(resultsId).replaceChildren(...snippets.map(snippetCard));
}
