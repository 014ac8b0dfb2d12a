import TurndownService from 'turndown';

/** HTML -> markdown for prose blocks (code blocks are handled separately as code snippets). */
export function createTurndown(pageUrl: string): TurndownService {
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
  td.remove(['script', 'style', 'noscript', 'img', 'button']);
  // Heading permalinks (mdBook wraps heading text in <a href="#id">) and in-page anchors carry no information.
  td.addRule('anchorText', {
    filter: (node) => node.nodeName === 'A' && ((node as HTMLElement).getAttribute('href') ?? '').startsWith('#'),
    replacement: (content) => content,
  });
  td.addRule('absoluteLinks', {
    filter: (node) => node.nodeName === 'A' && !!(node as HTMLElement).getAttribute('href'),
    replacement: (content, node) => {
      const href = (node as HTMLElement).getAttribute('href')!;
      let abs = href;
      try {
        abs = new URL(href, pageUrl).href;
      } catch {
        /* keep as written */
      }
      const text = content.trim();
      return text ? `[${text}](${abs})` : '';
    },
  });
  // Turndown has no table support of its own: a simple pipe table keeps rows and cells apart.
  td.addRule('table', {
    filter: 'table',
    replacement: (_content, node) => `\n\n${tableMarkdown(node as HTMLElement, td)}\n\n`,
  });
  td.addRule('pre', {
    filter: 'pre',
    replacement: (_content, node) => {
      const text = (node as HTMLElement).textContent ?? '';
      return `\n\n\`\`\`\n${text.replace(/\n+$/, '')}\n\`\`\`\n\n`;
    },
  });
  return td;
}

/** A table as a markdown pipe table (header = first row). */
export function tableMarkdown(table: Element | HTMLElement, td: TurndownService): string {
  const rows = [...table.querySelectorAll('tr')].map((tr) =>
    [...tr.querySelectorAll('th, td')].map((cell) => td.turndown(cell as HTMLElement).replace(/\s*\n+\s*/g, ' ').replace(/\|/g, '\\|').trim()),
  );
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r.length));
  const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => r[i] ?? '').join(' | ')} |`;
  return [line(rows[0]!), line(Array<string>(width).fill('---')), ...rows.slice(1).map(line)].join('\n');
}
