import TurndownService from 'turndown';
import { guessLanguage, languageFromClass } from './code-language.ts';

/**
 * HTML -> markdown for indexing (crawled prose, uploaded DOCX, HTML pages linked from llms.txt):
 * ATX headings, fenced code with a language, pipe tables, and no markdown escaping (escapes like
 * `before\_request` would hurt search). Output is meant to be searched and quoted, not re-rendered.
 */
export interface HtmlMarkdownOptions {
  /** URL of the page: relative links are made absolute against it (kept as written without one). */
  baseUrl?: string;
}

export function createTurndown(options: HtmlMarkdownOptions = {}): TurndownService {
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*', strongDelimiter: '**' });
  td.escape = (text: string) => text;
  td.remove(['script', 'style', 'noscript', 'template', 'button']);
  // Images as a rule: turndown's own image rule would win over remove(), and an image (a data: URI from DOCX) is no text to search.
  td.addRule('image', { filter: 'img', replacement: () => '' });
  td.addRule('links', {
    filter: (node) => node.nodeName === 'A' && !!node.getAttribute('href'),
    replacement: (content, node) => {
      const text = content.trim();
      return text ? `[${text}](${resolveHref((node as HTMLElement).getAttribute('href')!, options.baseUrl)})` : '';
    },
  });
  // Heading permalinks (mdBook wraps heading text in <a href="#id">) and in-page anchors carry no information.
  // Added after 'links' on purpose: turndown tries the rules added last first.
  td.addRule('anchorText', {
    filter: (node) => node.nodeName === 'A' && (node.getAttribute('href') ?? '').startsWith('#'),
    replacement: (content) => content,
  });
  // Turndown has no table support of its own: a simple pipe table keeps rows and cells apart.
  td.addRule('table', {
    filter: 'table',
    replacement: (_content, node) => `\n\n${tableMarkdown(node as HTMLElement, td)}\n\n`,
  });
  td.addRule('pre', {
    filter: 'pre',
    replacement: (_content, node) => `\n\n${preMarkdown(node as HTMLElement)}\n\n`,
  });
  return td;
}

let shared: TurndownService | null = null;

/** A whole HTML document or fragment as markdown, runs of blank lines collapsed. */
export function htmlToMarkdown(html: string, options: HtmlMarkdownOptions = {}): string {
  const td = options.baseUrl ? createTurndown(options) : (shared ??= createTurndown());
  return td
    .turndown(html)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** A table as a markdown pipe table (header = first row); rows of nested tables stay inside their cell. */
export function tableMarkdown(table: Element, td: TurndownService): string {
  const rows = directRows(table).map((tr) =>
    childElements(tr)
      .filter((c) => c.tagName === 'TD' || c.tagName === 'TH')
      .map((cell) =>
        td
          .turndown(cell as HTMLElement)
          .replace(/\s*\n+\s*/g, ' ')
          .replace(/\|/g, '\\|')
          .trim(),
      ),
  );
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r.length));
  const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => r[i] ?? '').join(' | ')} |`;
  return [line(rows[0]!), line(Array<string>(width).fill('---')), ...rows.slice(1).map(line)].join('\n');
}

/** A `<pre>` as a fence: language from the classes of the code, the pre or its wrapper, else guessed ('text' leaves the info empty). */
function preMarkdown(pre: Element): string {
  const code = preText(pre).replace(/\n+$/, '');
  const first = childElements(pre)[0];
  const inner = first?.tagName === 'CODE' ? first : null;
  const lang =
    languageFromClass(inner?.getAttribute('class')) ??
    languageFromClass(pre.getAttribute('class')) ??
    languageFromClass(pre.parentElement?.getAttribute('class')) ??
    guessLanguage(code);
  const fence = code.includes('```') ? '~~~~' : '```';
  return `${fence}${lang === 'text' ? '' : lang}\n${code}\n${fence}`;
}

/** Text of a pre with `<br>` as line breaks (mammoth joins DOCX code lines with them). */
function preText(node: Node): string {
  if (node.nodeType === 3) return node.textContent ?? '';
  if (node.nodeName === 'BR') return '\n';
  return Array.from(node.childNodes).map(preText).join('');
}

function directRows(table: Element): Element[] {
  const out: Element[] = [];
  const walk = (el: Element) => {
    for (const c of childElements(el)) {
      if (c.tagName === 'TR') out.push(c);
      else if (c.tagName !== 'TABLE') walk(c);
    }
  };
  walk(table);
  return out;
}

/** Element children through childNodes: the DOM turndown parses strings with (domino) has no iterable `children`. */
function childElements(el: Element): Element[] {
  return Array.from(el.childNodes).filter((n): n is Element => n.nodeType === 1);
}

function resolveHref(href: string, baseUrl: string | undefined): string {
  if (!baseUrl) return href;
  try {
    return new URL(href, baseUrl).href;
  } catch {
    return href;
  }
}
