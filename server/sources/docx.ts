import { ApiError } from '../../lib/errors.ts';
import { htmlToMarkdown } from '../../lib/text/html-markdown.ts';
import type { ExtractedDocument } from './pdf.ts';

/**
 * DOCX -> HTML (mammoth, with style mappings for the code styles Word and pandoc use) -> markdown.
 * Headings come from Heading N / Title styles, lists from numbering, tables as pipe tables,
 * code blocks from paragraphs in a code style (consecutive ones merged into one block).
 */
const styleMap = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => p:fresh",
  "p[style-name='Source Code'] => pre:fresh",
  "p[style-name='SourceCode'] => pre:fresh",
  "p[style-name='Code'] => pre:fresh",
  "p[style-name='HTML Preformatted'] => pre:fresh",
  "p[style-name='Plain Text'] => pre:fresh",
  "r[style-name='Verbatim Char'] => code",
  "r[style-name='Code Char'] => code",
  "r[style-name='HTML Code'] => code",
];

export async function docxToMarkdown(data: Buffer, fallbackTitle: string): Promise<ExtractedDocument> {
  // Loaded when a document arrives: most processes (each CLI command) never convert one.
  const { default: mammoth } = await import('mammoth');
  let html: string;
  try {
    const result = await mammoth.convertToHtml({ buffer: data }, { styleMap, includeDefaultStyleMap: true });
    html = result.value;
  } catch (err) {
    throw new ApiError('validation_error', `not a readable DOCX (${(err as Error).message ?? String(err)})`);
  }
  // Anchors mammoth emits for bookmarks carry no text.
  const markdown = htmlToMarkdown(mergeCodeLines(html.replace(/<a id="[^"]*"><\/a>/g, '')));
  const title = /^# (.+)$/m.exec(markdown)?.[1]?.trim() || fallbackTitle;
  return { title, markdown };
}

/**
 * One code paragraph per block (pandoc writes a block as one paragraph with line breaks) or one per
 * line (hand-written documents)? Adjacent single-line code paragraphs are joined into one block;
 * multi-line ones stay separate blocks.
 */
function mergeCodeLines(html: string): string {
  const pre = '<pre>(?:(?!</pre>)[\\s\\S])*</pre>';
  return html.replace(new RegExp(`(?:${pre}){2,}`, 'g'), (run) => {
    const pres = run.match(new RegExp(pre, 'g')) ?? [];
    const out: string[] = [];
    let lines: string[] = [];
    const flush = () => {
      if (lines.length) out.push(`<pre>${lines.join('<br />')}</pre>`);
      lines = [];
    };
    for (const block of pres) {
      const inner = block.slice(5, -6);
      if (/<br\s*\/?>/.test(inner)) {
        flush();
        out.push(block);
      } else lines.push(inner);
    }
    flush();
    return out.join('');
  });
}
