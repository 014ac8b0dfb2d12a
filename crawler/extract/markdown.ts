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
  td.addRule('pre', {
    filter: 'pre',
    replacement: (_content, node) => {
      const text = (node as HTMLElement).textContent ?? '';
      return `\n\n\`\`\`\n${text.replace(/\n+$/, '')}\n\`\`\`\n\n`;
    },
  });
  return td;
}
