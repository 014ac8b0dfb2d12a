import TurndownService from 'turndown';
import { guessLanguage } from './language.ts';

/**
 * HTML -> markdown for indexing (not for display): ATX headings, fenced code with the language
 * from `language-*` classes (or guessed), GitHub-style pipe tables, and no markdown escaping
 * (escapes like `before\_request` would hurt search).
 */
interface DomNode {
  nodeName: string;
  childNodes: ArrayLike<DomNode>;
  textContent: string | null;
  getAttribute?(name: string): string | null;
  firstChild: DomNode | null;
  nodeType: number;
}

export function createTurndown(): TurndownService {
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*', strongDelimiter: '**' });
  td.escape = (text: string) => text;
  td.remove(['script', 'style', 'noscript', 'template'] as never);
  td.addRule('preBlock', {
    filter: (node) => node.nodeName === 'PRE',
    replacement: (_content, node) => {
      const n = node as unknown as DomNode;
      const code = preText(n).replace(/\n+$/, '');
      const cls = `${n.getAttribute?.('class') ?? ''} ${(n.firstChild?.nodeName === 'CODE' ? n.firstChild.getAttribute?.('class') : '') ?? ''}`;
      const lang = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(cls)?.[1] ?? guessLanguage(code);
      const fence = code.includes('```') ? '~~~~' : '```';
      return `\n\n${fence}${lang === 'text' ? '' : lang}\n${code}\n${fence}\n\n`;
    },
  });
  td.addRule('table', {
    filter: (node) => node.nodeName === 'TABLE',
    replacement: (_content, node) => {
      const rows = collect(node as unknown as DomNode, 'TR').map((tr) => collectCells(tr).map((c) => cellText(c)));
      if (!rows.length) return '';
      const width = Math.max(...rows.map((r) => r.length));
      const pad = (r: string[]) => [...r, ...Array<string>(width - r.length).fill('')];
      const lines = [`| ${pad(rows[0]!).join(' | ')} |`, `|${' --- |'.repeat(width)}`, ...rows.slice(1).map((r) => `| ${pad(r).join(' | ')} |`)];
      return `\n\n${lines.join('\n')}\n\n`;
    },
  });
  return td;
}

let shared: TurndownService | null = null;

export function htmlToMarkdown(html: string): string {
  shared ??= createTurndown();
  return shared.turndown(html).replace(/\n{3,}/g, '\n\n').trim();
}

function preText(node: DomNode): string {
  let out = '';
  const walk = (n: DomNode) => {
    if (n.nodeType === 3) out += n.textContent ?? '';
    else if (n.nodeName === 'BR') out += '\n';
    else for (const c of Array.from(n.childNodes)) walk(c);
  };
  walk(node);
  return out;
}

function collect(node: DomNode, name: string): DomNode[] {
  const out: DomNode[] = [];
  const walk = (n: DomNode) => {
    for (const c of Array.from(n.childNodes)) {
      if (c.nodeName === name) out.push(c);
      else if (c.nodeName !== 'TABLE') walk(c);
    }
  };
  walk(node);
  return out;
}

function collectCells(tr: DomNode): DomNode[] {
  return Array.from(tr.childNodes).filter((c) => c.nodeName === 'TD' || c.nodeName === 'TH');
}

function cellText(cell: DomNode): string {
  return (cell.textContent ?? '').replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
}
