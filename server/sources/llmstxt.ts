import type { InfoSnippetInput, SnippetInput } from '../../lib/model.ts';
import { markdownToSnippets, withoutClosingHashes } from './markdown.ts';

/**
 * llms.txt (https://llmstxt.org): `# Title`, an optional `> summary`, free text, then `## Section`s
 * of `- [title](url): description` links. llms-full.txt / llms-small.txt carry the content inline.
 */
export interface LlmsLink {
  title: string;
  url: string;
  description: string;
  /** Heading path of the section the link is listed in (H2, H3, ...). */
  section: string[];
}

export interface LlmsTxt {
  title: string;
  summary: string;
  links: LlmsLink[];
  /** The text with the BOM stripped and line endings normalized. */
  text: string;
  /** The text without the link-list lines (what is left to index as content). */
  content: string;
}

export type LlmsKind = 'index' | 'full' | 'small';

/** llms-full.txt carries everything inline; llms.txt and llms-small.txt may list links to follow. */
export function llmsKindOf(url: string): LlmsKind {
  const name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '').toLowerCase();
  if (name.includes('llms-full')) return 'full';
  if (name.includes('llms-small')) return 'small';
  return 'index';
}

const LINK_LINE = /^\s*[-*+]\s+\[([^\]]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)\s*(?::\s*(\S.*)?)?$/;

export function parseLlmsTxt(raw: string, baseUrl: string): LlmsTxt {
  const text = raw.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  let title = '';
  let summary = '';
  const links: LlmsLink[] = [];
  const stack: { level: number; text: string }[] = [];
  const contentLines: string[] = [];
  let inFence: string | null = null;
  let sawH1 = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (inFence === null) inFence = fence[1]![0]!;
      else if (fence[1]![0] === inFence) inFence = null;
      contentLines.push(line);
      continue;
    }
    if (inFence !== null) {
      contentLines.push(line);
      continue;
    }
    const h = /^(#{1,6})\s/.exec(line);
    if (h) {
      const level = h[1]!.length;
      const headingText = withoutClosingHashes(line.slice(h[0].length)).replace(/\s+/g, ' ').trim();
      if (level === 1 && !sawH1) {
        title = headingText;
        sawH1 = true;
      } else if (level > 1) {
        while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
        stack.push({ level, text: headingText });
      }
      contentLines.push(line);
      continue;
    }
    if (sawH1 && !summary && stack.length === 0 && /^\s*>/.test(line)) {
      const quote: string[] = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]!); i++) quote.push(lines[i]!.replace(/^\s*>\s?/, ''));
      i--;
      summary = quote.join(' ').replace(/\s+/g, ' ').trim();
      contentLines.push(...quote.map((q) => `> ${q}`));
      continue;
    }
    const link = LINK_LINE.exec(line);
    if (link) {
      let url: string;
      try {
        url = new URL(link[2]!, baseUrl).href;
      } catch {
        contentLines.push(line);
        continue;
      }
      links.push({ title: link[1]!.trim(), url, description: (link[3] ?? '').trim(), section: stack.map((s) => s.text) });
      continue;
    }
    contentLines.push(line);
  }
  return { title, summary, links, text, content: contentLines.join('\n') };
}

/** Snippets from the llms.txt file itself: its content (prose, code) and one InfoSnippet per listed link. */
export function llmsTxtSnippets(doc: LlmsTxt, url: string, libraryTitle: string): SnippetInput[] {
  const out: SnippetInput[] = markdownToSnippets(doc.content, { sourceId: url, pageTitle: doc.title || libraryTitle, breadcrumb: [libraryTitle] });
  for (const link of doc.links) {
    const entry: InfoSnippetInput = {
      kind: 'info',
      sourceId: link.url,
      title: link.title,
      pageTitle: doc.title || libraryTitle,
      breadcrumb: [libraryTitle, ...link.section, link.title].join(' > '),
      content: `[${link.title}](${link.url})${link.description ? `: ${link.description}` : ''}${link.section.length ? `\nSection: ${link.section.join(' > ')}` : ''}`,
    };
    out.push(entry);
  }
  return out;
}

/** Snippets from one linked document (markdown or text) listed in an llms.txt. */
export function linkedDocumentSnippets(markdown: string, link: LlmsLink, libraryTitle: string): SnippetInput[] {
  return markdownToSnippets(markdown, { sourceId: link.url, pageTitle: link.title, breadcrumb: [libraryTitle, ...link.section, link.title] });
}
