import mammoth from 'mammoth';
import { ApiError } from '../errors.ts';
import { htmlToMarkdown } from './html.ts';
import type { ExtractedDocument } from './pdf.ts';

/**
 * DOCX -> HTML (mammoth, with style mappings for the code styles Word and pandoc use) -> markdown.
 * Headings come from Heading N / Title styles, lists from numbering, tables as pipe tables,
 * code blocks from paragraphs in a code style (consecutive ones merged into one block).
 */
const styleMap = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => p:fresh",
  "p[style-name='Source Code'] => pre:separator('\\n')",
  "p[style-name='SourceCode'] => pre:separator('\\n')",
  "p[style-name='Code'] => pre:separator('\\n')",
  "p[style-name='HTML Preformatted'] => pre:separator('\\n')",
  "p[style-name='Plain Text'] => pre:separator('\\n')",
  "r[style-name='Verbatim Char'] => code",
  "r[style-name='Code Char'] => code",
  "r[style-name='HTML Code'] => code",
];

export async function docxToMarkdown(data: Buffer, fallbackTitle: string): Promise<ExtractedDocument> {
  let html: string;
  try {
    const result = await mammoth.convertToHtml({ buffer: data }, { styleMap, includeDefaultStyleMap: true });
    html = result.value;
  } catch (err) {
    throw new ApiError('validation_error', `not a readable DOCX (${(err as Error).message ?? String(err)})`);
  }
  // Anchors mammoth emits for bookmarks carry no text.
  const markdown = htmlToMarkdown(html.replace(/<a id="[^"]*"><\/a>/g, ''));
  const title = /^# (.+)$/m.exec(markdown)?.[1]?.trim() || fallbackTitle;
  return { title, markdown };
}
