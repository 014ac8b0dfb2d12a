import type TurndownService from 'turndown';
import type { CodeSnippetInput, InfoSnippetInput, SnippetInput } from '../../lib/model.ts';
import { guessLanguage, languageFromClass } from '../../lib/text/code-language.ts';
import { tableMarkdown } from '../../lib/text/html-markdown.ts';

/** Blocks converted to markdown as a whole (unless they hold a code block or heading, then they are walked). */
const PROSE_BLOCKS = new Set(['p', 'ul', 'ol', 'dl', 'blockquote', 'table', 'details', 'figure', 'hr', 'address']);
/** Inline elements: their text joins the running paragraph instead of starting a block. */
const INLINE = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'data',
  'dfn',
  'em',
  'i',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'br',
  'wbr',
  'del',
  'ins',
]);

/** Longest prose chunk per info snippet, in characters (about 800 tokens); longer sections are split between blocks. */
const MAX_INFO_CHARS = 3200;
const MIN_INFO_CHARS = 25;
const MAX_DESCRIPTION_CHARS = 500;

interface Heading {
  level: number;
  text: string;
  anchor: string | null;
}

interface Section {
  heading: Heading | null;
  /** Heading texts from h2 (or h1 on multi-chapter pages) down to this section. */
  trail: string[];
  blocks: string[];
  /** Prose blocks seen since the last code block (the description of the next one). */
  sinceCode: string[];
}

export interface SnippetOptions {
  pageUrl: string;
  pageTitle: string;
  /** Whether h1 headings are part of breadcrumbs (pages holding several chapters). */
  h1InTrail: boolean;
  turndown: TurndownService;
}

export interface PageSnippets {
  snippets: SnippetInput[];
  codeBlocks: number;
  headings: number;
}

/**
 * Walks the main element in document order: every `<pre>` becomes one CodeSnippet (title from
 * the nearest heading, description from the prose just before it, language from the class or
 * guessed, source = page URL#anchor), and the prose of every heading section becomes
 * InfoSnippets with a breadcrumb `page title > h2 > h3`.
 */
export function buildSnippets(main: Element, opts: SnippetOptions): PageSnippets {
  const out: SnippetInput[] = [];
  const stack: Heading[] = [];
  let codeBlocks = 0;
  let headings = 0;
  let section: Section = { heading: null, trail: [], blocks: [], sinceCode: [] };
  let inline = '';

  const pushBlock = (md: string) => {
    const text = md.trim();
    if (!text) return;
    section.blocks.push(text);
    section.sinceCode.push(text);
  };
  const flushInline = () => {
    if (inline.trim()) pushBlock(inline.replace(/[ \t]+/g, ' '));
    inline = '';
  };
  const closeSection = () => {
    flushInline();
    out.push(...infoSnippets(section, opts));
  };

  const startHeading = (el: Element, level: number) => {
    closeSection();
    headings++;
    const h: Heading = { level, text: clean(el.textContent ?? ''), anchor: anchorOf(el) };
    while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push(h);
    const trail = stack.filter((x) => x.level > 1 || opts.h1InTrail).map((x) => x.text);
    section = { heading: h, trail, blocks: [], sinceCode: [] };
  };

  const codeBlock = (pre: Element) => {
    flushInline();
    const snippet = codeSnippet(pre, section, opts);
    if (!snippet) return;
    codeBlocks++;
    out.push(snippet);
    section.sinceCode = [];
  };

  const walk = (node: Node) => {
    for (const child of [...node.childNodes]) {
      if (child.nodeType === 3) {
        inline += child.textContent ?? '';
        continue;
      }
      if (child.nodeType !== 1) continue;
      const el = child as Element;
      const tag = el.tagName.toLowerCase();
      const hm = /^h([1-6])$/.exec(tag);
      if (hm) {
        startHeading(el, Number(hm[1]));
      } else if (tag === 'pre') {
        codeBlock(el);
      } else if (INLINE.has(tag) && !el.querySelector('pre, h1, h2, h3, h4, h5, h6, p, div')) {
        inline += opts.turndown.turndown(el as unknown as HTMLElement);
      } else if (tag === 'table' && !el.querySelector('pre, h1, h2, h3, h4, h5, h6')) {
        flushInline();
        pushBlock(tableMarkdown(el, opts.turndown));
      } else if (PROSE_BLOCKS.has(tag) && !el.querySelector('pre, h1, h2, h3, h4, h5, h6')) {
        flushInline();
        pushBlock(opts.turndown.turndown(el as unknown as HTMLElement));
      } else {
        flushInline();
        walk(el);
        flushInline();
      }
    }
  };

  walk(main);
  closeSection();
  return { snippets: out, codeBlocks, headings };
}

function sourceFor(opts: SnippetOptions, h: Heading | null): string {
  return h?.anchor ? `${opts.pageUrl}#${h.anchor}` : opts.pageUrl;
}

function breadcrumbFor(opts: SnippetOptions, trail: string[]): string {
  return [opts.pageTitle, ...trail].filter(Boolean).join(' > ');
}

/** The InfoSnippets of a section's prose: its blocks in chunks of at most MAX_INFO_CHARS. */
function infoSnippets(s: Section, opts: SnippetOptions): InfoSnippetInput[] {
  const out: InfoSnippetInput[] = [];
  let chunk: string[] = [];
  let size = 0;
  const flush = () => {
    const content = chunk.join('\n\n').trim();
    // A lone lead-in to a code block ("Here is an example:") says nothing the code snippet does not.
    const leadInOnly = content.length < 120 && content.endsWith(':');
    if (content.length >= MIN_INFO_CHARS && !leadInOnly) {
      const info: InfoSnippetInput = {
        kind: 'info',
        sourceId: sourceFor(opts, s.heading),
        content,
        breadcrumb: breadcrumbFor(opts, s.trail),
        pageTitle: opts.pageTitle,
        title: s.heading?.text ?? opts.pageTitle,
      };
      out.push(info);
    }
    chunk = [];
    size = 0;
  };
  for (const b of s.blocks) {
    if (size > 0 && size + b.length > MAX_INFO_CHARS) flush();
    chunk.push(b);
    size += b.length + 2;
  }
  flush();
  return out;
}

/** The CodeSnippet of a `<pre>` in a section (title, description, language), or null when it holds no code. */
function codeSnippet(pre: Element, section: Section, opts: SnippetOptions): CodeSnippetInput | null {
  const codeEl = pre.querySelector('code') ?? pre;
  // mdBook's hidden setup lines (`# fn main() {`), shown only on demand, are not part of the example.
  for (const boring of codeEl.querySelectorAll('.boring')) boring.remove();
  const code = (codeEl.textContent ?? '').replace(/^\n+|\s+$/g, '');
  if (!code.trim()) return null;
  const language =
    languageFromClass(codeEl.getAttribute('class')) ??
    languageFromClass(pre.getAttribute('class')) ??
    languageFromClass(pre.parentElement?.getAttribute('class')) ??
    guessLanguage(code);
  const title = section.heading?.text || opts.pageTitle;
  const description = describe(section.sinceCode) || (section.trail.length ? breadcrumbFor(opts, section.trail) : `Example from ${opts.pageTitle}`);
  return {
    kind: 'code',
    sourceId: sourceFor(opts, section.heading),
    title,
    description,
    language,
    pageTitle: opts.pageTitle,
    breadcrumb: breadcrumbFor(opts, section.trail),
    codeList: [{ language, code }],
  };
}

/** The prose right before a code block: the last block, or the last two when the last is a short lead-in ("For example:"). */
function describe(blocks: string[]): string {
  if (blocks.length === 0) return '';
  let text = blocks[blocks.length - 1]!;
  if (text.length < 80 && blocks.length > 1) text = `${blocks[blocks.length - 2]}\n\n${text}`;
  text = text.trim();
  return text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS - 1).replace(/\s+\S*$/, '')}…` : text;
}

function anchorOf(el: Element): string | null {
  const id = el.getAttribute('id') ?? el.querySelector('[id]')?.getAttribute('id') ?? el.querySelector('a[name]')?.getAttribute('name');
  if (id) return id;
  const href = el.querySelector('a[href^="#"]')?.getAttribute('href');
  return href && href.length > 1 ? href.slice(1) : null;
}

function clean(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/[¶#]\s*$/, '')
    .trim();
}
