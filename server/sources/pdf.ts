import type { getDocumentProxy } from 'unpdf';
import { ApiError } from '../../lib/errors.ts';
import { guessLanguage } from '../../lib/text/code-language.ts';

/**
 * PDF -> markdown with structure recovered from the text layer (unpdf / pdf.js):
 * headings from font size (and bold-only lines at body size set in a heading font),
 * code blocks from runs of monospace lines (indentation from x offsets), list items from bullets,
 * paragraphs from vertical gaps. Lines repeated on most pages (running headers/footers, page
 * numbers) are dropped.
 */
export interface ExtractedDocument {
  title: string;
  markdown: string;
  pages?: number;
}

interface TextItem {
  str: string;
  fontName: string;
  transform: number[];
  width: number;
}

interface Line {
  page: number;
  y: number;
  x: number;
  size: number;
  text: string;
  mono: boolean;
  fonts: Set<string>;
  /** Items separated by wide gaps: a table row (or columns), never code or a heading. */
  cells: boolean;
}

export async function pdfToMarkdown(data: Uint8Array, fallbackTitle: string, options: { signal?: AbortSignal } = {}): Promise<ExtractedDocument> {
  // Loaded when a document arrives: most processes (each CLI command) never read a PDF.
  const { getDocumentProxy: open } = await import('unpdf');
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await open(data, { verbosity: 0 } as never);
  } catch (err) {
    throw new ApiError('validation_error', `not a readable PDF (${(err as Error).message ?? String(err)})`);
  }
  try {
    let metaTitle = '';
    try {
      const meta = await pdf.getMetadata();
      metaTitle = String((meta.info as Record<string, unknown> | undefined)?.Title ?? '').trim();
    } catch {
      /* metadata is optional */
    }
    const lines: Line[] = [];
    for (let p = 1; p <= pdf.numPages; p++) {
      if (options.signal?.aborted) throw options.signal.reason;
      const page = await pdf.getPage(p);
      const content = (await page.getTextContent()) as unknown as { items: TextItem[]; styles: Record<string, { fontFamily: string }> };
      lines.push(...pageLines(p, content.items, content.styles));
      page.cleanup();
    }
    const kept = dropRunningLines(lines, pdf.numPages);
    const markdown = linesToMarkdown(kept);
    const firstHeading = /^#{1,6} (.+)$/m.exec(markdown)?.[1];
    return { title: metaTitle || firstHeading || fallbackTitle, markdown, pages: pdf.numPages };
  } finally {
    await (pdf as unknown as { cleanup?: () => Promise<void> }).cleanup?.();
  }
}

function pageLines(page: number, items: TextItem[], styles: Record<string, { fontFamily: string }>): Line[] {
  const rows: { y: number; items: TextItem[] }[] = [];
  for (const it of items) {
    if (!it.str) continue;
    const y = it.transform[5]!;
    const row = rows.find((r) => Math.abs(r.y - y) <= 2);
    if (row) row.items.push(it);
    else rows.push({ y, items: [it] });
  }
  rows.sort((a, b) => b.y - a.y);
  const out: Line[] = [];
  for (const row of rows) {
    row.items.sort((a, b) => a.transform[4]! - b.transform[4]!);
    let text = '';
    let end = -Infinity;
    let monoChars = 0;
    let chars = 0;
    let cells = false;
    const sizes = new Map<number, number>();
    const fonts = new Set<string>();
    for (const it of row.items) {
      const size = Math.hypot(it.transform[0]!, it.transform[1]!);
      const x = it.transform[4]!;
      if (text && x - end > size * 2.5 && it.str.trim()) {
        // A gap of several characters: the next table cell (or column).
        text = `${text.replace(/\s+$/, '')} | `;
        cells = true;
      } else if (text && x - end > size * 0.25 && !/\s$/.test(text) && !/^\s/.test(it.str)) text += ' ';
      text += it.str;
      end = x + it.width;
      const visible = it.str.replace(/\s/g, '').length;
      if (visible) {
        chars += visible;
        if (styles[it.fontName]?.fontFamily === 'monospace' || /mono|courier|code|consol/i.test(it.fontName)) monoChars += visible;
        fonts.add(it.fontName);
        const r = Math.round(size * 2) / 2;
        sizes.set(r, (sizes.get(r) ?? 0) + visible);
      }
    }
    if (!text.trim()) continue;
    const size = [...sizes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
    out.push({ page, y: row.y, x: row.items[0]!.transform[4]!, size, text: text.replace(/\s+$/, ''), mono: chars > 0 && monoChars === chars, fonts, cells });
  }
  return out;
}

/** Drops lines that repeat (digits ignored) near the top or bottom of at least half the pages. */
function dropRunningLines(lines: Line[], pages: number): Line[] {
  if (pages < 3) return lines.filter((l) => !/^(page\s+)?\d+(\s*(\/|of)\s*\d+)?$/i.test(l.text.trim()));
  const key = (l: Line) => l.text.trim().replace(/\d+/g, '#');
  const byPage = new Map<number, Line[]>();
  for (const l of lines) byPage.set(l.page, [...(byPage.get(l.page) ?? []), l]);
  const counts = new Map<string, number>();
  for (const pl of byPage.values()) {
    const edge = new Set([...pl.slice(0, 3), ...pl.slice(-3)].map(key));
    for (const k of edge) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const running = new Set([...counts.entries()].filter(([, n]) => n >= Math.max(3, pages / 2)).map(([k]) => k));
  return lines.filter((l) => {
    if (/^(page\s+)?\d+(\s*(\/|of)\s*\d+)?$/i.test(l.text.trim())) return false;
    if (!running.has(key(l))) return true;
    const pl = byPage.get(l.page)!;
    const i = pl.indexOf(l);
    return !(i < 3 || i >= pl.length - 3);
  });
}

/** Admonition titles ("Note: ...", "Warning") are set like headings but belong to the text around them. */
const ADMONITION = /^(note|warning|danger|tip|important|caution|info|hint|attention|error|example|see also)\b/i;

/** The document's body text size, the sizes set larger than it (headings, largest first) and their fonts. */
function textStyle(lines: Line[]): { body: number; headingSizes: number[]; headingFonts: Set<string> } {
  // Body size: the size carrying the most characters among non-monospace lines.
  const weight = new Map<number, number>();
  for (const l of lines) if (!l.mono) weight.set(l.size, (weight.get(l.size) ?? 0) + l.text.length);
  const body = [...weight.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 10;
  const headingSizes = [...new Set(lines.filter((l) => !l.mono && l.size >= body * 1.12 && l.text.length <= 150).map((l) => l.size))].sort((a, b) => b - a);
  const headingFonts = new Set<string>();
  for (const l of lines) if (!l.mono && headingSizes.includes(l.size)) for (const f of l.fonts) headingFonts.add(f);
  return { body, headingSizes, headingFonts };
}

/** Monospace lines as a fenced code block, their indentation kept from their x positions. */
function codeFence(code: Line[], body: number): string {
  const minX = Math.min(...code.map((l) => l.x));
  const charW = (code[0]!.size || body) * 0.6;
  const text = code.map((l) => ' '.repeat(Math.max(0, Math.round((l.x - minX) / charW))) + l.text).join('\n');
  return '```' + (guessLanguage(text) === 'text' ? '' : guessLanguage(text)) + '\n' + text + '\n```';
}

/** A table row as a markdown row, joined to the table above it when the previous line was a row too. */
function pushTableRow(out: string[], l: Line, prev: Line | null): void {
  const rowText = `| ${l.text.trim()} |`;
  if (prev?.cells && out[out.length - 1]?.startsWith('| ')) out[out.length - 1] += `\n${rowText}`;
  else out.push(rowText);
}

/** Adds a line to the paragraph (or list item) being built. */
function appendToParagraph(para: string[], l: Line): void {
  if (para.length) {
    const last = para[para.length - 1]!;
    // Join wrapped lines of one paragraph (or list item); keep hyphenated words together.
    para[para.length - 1] = /[-‐]$/.test(last) && /^[a-z]/.test(l.text) ? last + l.text : `${last} ${l.text.trim()}`;
  } else para.push(l.text.trim());
}

function linesToMarkdown(lines: Line[]): string {
  if (lines.length === 0) return '';
  const { body, headingSizes, headingFonts } = textStyle(lines);
  const levelOf = (size: number) => Math.min(6, headingSizes.indexOf(size) + 1);
  const boldLevel = Math.min(6, headingSizes.length + 1);

  const out: string[] = [];
  let para: string[] = [];
  let code: Line[] = [];
  let prev: Line | null = null;
  let prevHeading = false;
  const flushPara = () => {
    if (para.length) out.push(para.join('\n'));
    para = [];
  };
  const flushCode = () => {
    if (!code.length) return;
    out.push(codeFence(code, body));
    code = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const next = lines[i + 1];
    const gap = prev && prev.page === l.page ? prev.y - l.y : Infinity;
    if (l.cells) {
      // Table rows stay one line each.
      flushCode();
      flushPara();
      pushTableRow(out, l, prev);
      prevHeading = false;
      prev = l;
      continue;
    }
    if (l.mono) {
      prevHeading = false;
      flushPara();
      // Only a very large gap between monospace lines starts a new block (code has blank lines); a page break does not.
      if (code.length && prev && prev.page === l.page && gap > l.size * 5) flushCode();
      code.push(l);
      prev = l;
      continue;
    }
    flushCode();
    const isSizeHeading = headingSizes.includes(l.size) && l.text.length <= 150;
    const nextGap = next && next.page === l.page ? l.y - next.y : Infinity;
    const isBoldHeading =
      !isSizeHeading &&
      Math.abs(l.size - body) < 0.6 &&
      l.text.length <= 100 &&
      [...l.fonts].every((f) => headingFonts.has(f)) &&
      !/[.,;]$/.test(l.text) &&
      !ADMONITION.test(l.text) &&
      gap > body * 1.6 &&
      nextGap > body * 1.3;
    if (isSizeHeading || isBoldHeading) {
      flushPara();
      const marks = '#'.repeat(isSizeHeading ? levelOf(l.size) : boldLevel);
      const last = out[out.length - 1];
      // A heading wrapped over two lines: same size, directly below the previous heading line.
      if (isSizeHeading && prevHeading && prev && prev.page === l.page && prev.size === l.size && gap <= l.size * 1.5 && last?.startsWith(`${marks} `)) {
        out[out.length - 1] = `${last} ${l.text.trim()}`;
      } else out.push(`${marks} ${l.text.trim()}`);
      prevHeading = true;
      prev = l;
      continue;
    }
    prevHeading = false;
    const bullet = /^\s*([•◦▪‣●○■\-–*]|\d{1,3}[.)])\s+/.exec(l.text);
    if (bullet) {
      flushPara();
      para.push(`- ${l.text.slice(bullet[0].length)}`);
      prev = l;
      continue;
    }
    const newParagraph = prev !== null && prev.page === l.page && gap > l.size * 1.55;
    if (newParagraph) flushPara();
    appendToParagraph(para, l);
    prev = l;
  }
  flushCode();
  flushPara();
  return out.join('\n\n');
}
