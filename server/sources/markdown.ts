import type { CodeSnippetInput, InfoSnippetInput, SnippetInput } from '../../lib/model.ts';
import { guessLanguage, languageFromFence } from '../../lib/text/code-language.ts';

/**
 * Markdown -> snippets, shared by every source that has (or produces) markdown: llms.txt, PDF and
 * DOCX extraction, and the website crawler after HTML -> markdown.
 *
 * Rules (from what worked for similar tools): split on headings and keep the heading path as the
 * breadcrumb; never split inside a code fence; every fenced block becomes a CodeSnippet whose
 * description is the prose right before it; the prose of a section becomes InfoSnippets, split at
 * paragraph boundaries when long.
 */
export interface MarkdownSplitOptions {
  /** URL (or upload:// address) of the document; heading anchors are appended as #fragment. */
  sourceId: string;
  /** Title of the document (pageTitle of every snippet). */
  pageTitle: string;
  /** Breadcrumb parts put before the heading path (e.g. the library title or a link section). */
  breadcrumb?: string[];
  /** Largest InfoSnippet in characters before a section is split at paragraph boundaries (default 3000). */
  maxInfoChars?: number;
  /** Prose shorter than this (after trimming) is not stored as an InfoSnippet (default 40). */
  minInfoChars?: number;
  /** Anchor style for #fragments: GitHub-like slugs of the heading (default) or none. */
  anchors?: boolean;
}

export interface MarkdownBlock {
  type: 'heading' | 'code' | 'text';
  /** heading: level 1-6 */
  level?: number;
  text: string;
  /** code: language from the fence info string ('' when none) */
  language?: string;
}

export interface MarkdownSection {
  /** Heading path from the top of the document, e.g. ['Guide', 'Install']. Empty before the first heading. */
  path: string[];
  level: number;
  anchor: string;
  /** Paragraph-level prose blocks (lists and tables kept whole). */
  paragraphs: string[];
  /** Blocks in order, for callers that need the interleaving of prose and code. */
  blocks: ({ kind: 'text'; text: string } | { kind: 'code'; language: string; code: string })[];
}

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})/;
/** The text after the marker holds the closing sequence, if any; atxText takes it off. */
const ATX = /^ {0,3}(#{1,6})(?:[ \t](.*))?$/;
const SETEXT_1 = /^ {0,3}=+[ \t]*$/;
const SETEXT_2 = /^ {0,3}-+[ \t]*$/;

/** Tokenizes markdown into headings, fenced code blocks and prose paragraphs. */
export function parseMarkdownBlocks(markdown: string): MarkdownBlock[] {
  const lines = markdown
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  const blocks: MarkdownBlock[] = [];
  let para: string[] = [];
  const flush = () => {
    const text = para.join('\n').replace(/^\n+/, '').trimEnd();
    if (text.trim()) blocks.push({ type: 'text', text });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = fenceOpen(line);
    if (fence) {
      flush();
      const { indent, marker, info } = fence;
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const l = lines[j]!;
        const close = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
        if (close.test(l)) break;
        // Remove up to the opening fence's indentation from content lines, as CommonMark does.
        body.push(indent ? l.replace(new RegExp(`^ {0,${indent}}`), '') : l);
      }
      blocks.push({ type: 'code', text: body.join('\n'), language: info });
      i = j; // skips the closing fence (or runs to the end of an unclosed fence)
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      flush();
      blocks.push({ type: 'heading', level: atx[1]!.length, text: cleanHeading(atxText(atx[2] ?? '')) });
      continue;
    }
    // Setext heading: a single paragraph line underlined with === or ---.
    const next = lines[i + 1];
    if (
      next !== undefined &&
      para.length === 0 &&
      line.trim() &&
      !/^\s*([-*+]\s|\d+[.)]\s|>|\|)/.test(line) &&
      (SETEXT_1.test(next) || (SETEXT_2.test(next) && next.trim().length >= 3))
    ) {
      blocks.push({ type: 'heading', level: SETEXT_1.test(next) ? 1 : 2, text: cleanHeading(line) });
      i++;
      continue;
    }
    if (!line.trim()) {
      // A blank line ends a paragraph, except inside a list or a table where items stay together.
      const prev = para[para.length - 1];
      const following = lines.slice(i + 1).find((l) => l.trim()) ?? '';
      if (prev !== undefined && isListLine(prev) && (isListLine(following) || /^\s{2,}\S/.test(following))) {
        para.push('');
        continue;
      }
      flush();
      continue;
    }
    para.push(line);
  }
  flush();
  return blocks;
}

/**
 * An opening code fence: its indentation, its marker (the whole run of backticks or tildes) and the
 * first word of its info string; no backtick may follow the marker. Read by parts: as one pattern,
 * the marker, the blanks and the info string backtracked over long runs of tildes or spaces.
 */
function fenceOpen(line: string): { indent: number; marker: string; info: string } | null {
  const m = FENCE_OPEN.exec(line);
  if (!m) return null;
  const rest = line.slice(m[0].length);
  if (rest.includes('`')) return null;
  return { indent: m[1]!.length, marker: m[2]!, info: rest.trimStart().split(/\s/, 1)[0]! };
}

/**
 * An ATX heading's text without its closing sequence: a run of `#` after a space or tab, then blanks.
 * (The look-behinds start a match only at the start of a run of blanks; the former single pattern
 * backtracked over long runs.)
 */
function atxText(rest: string): string {
  const text = rest.replace(/^[ \t]+/, '').replace(/(?<![ \t])[ \t]+$/, '');
  return text.replace(/(?<![ \t])[ \t]+#+$/, '');
}

/** A heading's text without a closing run of `#` and the whitespace around it (`Title ##` -> `Title`). */
export function withoutClosingHashes(text: string): string {
  return text
    .trimEnd()
    .replace(/(?<!#)#+$/, '')
    .trimEnd();
}

function isListLine(line: string): boolean {
  return /^\s*([-*+]|\d+[.)])\s+/.test(line) || /^\s{2,}\S/.test(line);
}

/** Strips inline markdown from heading text (links, emphasis, code ticks, trailing anchors). */
export function cleanHeading(text: string): string {
  return text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|\s)[*_](\S(?:.*?\S)?)[*_](?=\s|$)/g, '$1$2')
    .replace(/(?<!\s)\s+#+\s*$/, '') // starts only where a run of blanks starts: tried from every blank, a long run took its square
    .replace(/\{#[^}]*\}\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** GitHub-style anchor for a heading. */
export function slugAnchor(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** Groups blocks into sections by heading, each with its heading path. */
export function sectionsOf(markdown: string): MarkdownSection[] {
  const blocks = parseMarkdownBlocks(markdown);
  const sections: MarkdownSection[] = [];
  const stack: { level: number; text: string }[] = [];
  const used = new Map<string, number>();
  let current: MarkdownSection = { path: [], level: 0, anchor: '', paragraphs: [], blocks: [] };
  sections.push(current);
  for (const b of blocks) {
    if (b.type === 'heading') {
      const level = b.level!;
      while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
      stack.push({ level, text: b.text });
      let anchor = slugAnchor(b.text);
      const n = used.get(anchor) ?? 0;
      used.set(anchor, n + 1);
      if (n > 0) anchor = `${anchor}-${n}`;
      current = { path: stack.map((s) => s.text).filter(Boolean), level, anchor, paragraphs: [], blocks: [] };
      sections.push(current);
    } else if (b.type === 'code') {
      current.blocks.push({ kind: 'code', language: b.language ?? '', code: b.text });
    } else {
      current.paragraphs.push(b.text);
      current.blocks.push({ kind: 'text', text: b.text });
    }
  }
  return sections.filter((s) => s.blocks.length > 0 || s.path.length > 0);
}

/** Splits a markdown document into CodeSnippets (one per fenced block) and InfoSnippets (prose per section). */
export function markdownToSnippets(markdown: string, options: MarkdownSplitOptions): SnippetInput[] {
  const maxInfo = options.maxInfoChars ?? 3000;
  const minInfo = options.minInfoChars ?? 40;
  const prefix = (options.breadcrumb ?? []).filter(Boolean);
  const out: SnippetInput[] = [];
  for (const section of sectionsOf(markdown)) {
    // The document title is often repeated as the first heading; do not repeat it in the breadcrumb.
    const path = repeatsTitle(prefix[prefix.length - 1], section.path[0]) ? section.path.slice(1) : section.path;
    const crumbs = [...prefix, ...path];
    const breadcrumb = crumbs.join(' > ');
    const sourceId = section.anchor && options.anchors !== false ? `${options.sourceId}#${section.anchor}` : options.sourceId;
    const heading = section.path[section.path.length - 1] ?? options.pageTitle;

    let lastProse = '';
    let codeIndex = 0;
    const codeCount = section.blocks.filter((b) => b.kind === 'code').length;
    for (const block of section.blocks) {
      if (block.kind === 'text') {
        lastProse = block.text;
        continue;
      }
      const code = block.code.replace(/^\n+|\s+$/g, '');
      if (!code.trim()) continue;
      codeIndex++;
      const language = languageFromFence(block.language) ?? guessLanguage(code);
      const snippet: CodeSnippetInput = {
        kind: 'code',
        sourceId,
        title: codeCount > 1 ? `${heading} (${codeIndex})` : heading,
        description: describe(lastProse) || firstSentence(section.paragraphs[0] ?? '') || heading,
        language,
        pageTitle: options.pageTitle,
        breadcrumb,
        codeList: [{ language, code }],
      };
      out.push(snippet);
      lastProse = '';
    }

    const prose = section.paragraphs.filter((p) => p.trim());
    if (prose.join('\n\n').trim().length < minInfo) continue;
    for (const chunk of packParagraphs(prose, maxInfo)) {
      const info: InfoSnippetInput = { kind: 'info', sourceId, content: chunk, breadcrumb, pageTitle: options.pageTitle, title: heading };
      out.push(info);
    }
  }
  return out;
}

/** True when the first heading only repeats the document title ("Functions" under "pyDeprecate — Functions"). */
function repeatsTitle(title: string | undefined, heading: string | undefined): boolean {
  if (!title || !heading) return false;
  const t = title.toLowerCase().trim();
  const h = heading.toLowerCase().trim();
  return t === h || (h.length >= 4 && t.endsWith(h));
}

/** Packs paragraphs into chunks of at most maxChars (a single longer paragraph is cut at line, then sentence boundaries). */
export function packParagraphs(paragraphs: string[], maxChars: number): string[] {
  const pieces: string[] = [];
  for (const p of paragraphs) {
    if (p.length <= maxChars) pieces.push(p);
    else pieces.push(...cutLong(p, maxChars));
  }
  const chunks: string[] = [];
  let cur = '';
  for (const piece of pieces) {
    if (cur && cur.length + 2 + piece.length > maxChars) {
      chunks.push(cur);
      cur = '';
    }
    cur = cur ? `${cur}\n\n${piece}` : piece;
  }
  if (cur.trim()) chunks.push(cur);
  return chunks;
}

function cutLong(text: string, maxChars: number): string[] {
  const units = text.includes('\n') ? text.split('\n') : text.split(/(?<=[.!?])\s+/);
  const out: string[] = [];
  let cur = '';
  for (const u of units) {
    if (u.length > maxChars) {
      if (cur) out.push(cur);
      cur = '';
      for (let i = 0; i < u.length; i += maxChars) out.push(u.slice(i, i + maxChars));
      continue;
    }
    if (cur && cur.length + 1 + u.length > maxChars) {
      out.push(cur);
      cur = '';
    }
    cur = cur ? `${cur}${text.includes('\n') ? '\n' : ' '}${u}` : u;
  }
  if (cur) out.push(cur);
  return out;
}

/** The prose right before a code block, shortened to a description. */
function describe(prose: string): string {
  const text = stripInline(prose).trim();
  if (!text) return '';
  return text.length > 600 ? `${text.slice(0, 597).replace(/\s+\S*$/, '')}...` : text;
}

function firstSentence(prose: string): string {
  const text = stripInline(prose).trim();
  const m = /^(.{20,300}?[.!?])(\s|$)/s.exec(text);
  return m ? m[1]! : text.slice(0, 300);
}

function stripInline(text: string): string {
  return text
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ');
}
