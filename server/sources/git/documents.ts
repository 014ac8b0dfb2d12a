import path from 'node:path';
import frontMatterModule from 'front-matter';
import type { SnippetInput } from '../../../lib/model.ts';
import { markdownToSnippets, withoutClosingHashes } from '../markdown.ts';
import { mdxToMarkdown } from './mdx.ts';
import { rstToMarkdown } from './rst.ts';
import { notebookToMarkdown } from './notebook.ts';

/**
 * One documentation file of a repository as snippets: converted to markdown by its extension
 * (markdown as it is, MDX reduced to its text, reStructuredText converted, a notebook's cells,
 * plain text), its front matter read into the page's metadata (title, description), then split
 * by the markdown splitter every source shares (server/sources/markdown.ts).
 */
export const DOC_EXTENSIONS = ['.md', '.mdx', '.markdown', '.rst', '.txt', '.ipynb'] as const;

export interface DocumentPage {
  markdown: string;
  title: string;
}

/** front-matter is CommonJS: its default export is the function (its typings say otherwise under NodeNext). */
const frontMatter = frontMatterModule as unknown as <T>(text: string) => { attributes: T; body: string };

interface Meta {
  title?: unknown;
  description?: unknown;
  sidebar_label?: unknown;
}

/** The markdown and title of a documentation file (front matter stripped; its description leads the page). */
export function documentPage(file: string, text: string): DocumentPage {
  const ext = path.posix.extname(file).toLowerCase();
  let body = text.replace(/^\uFEFF/, '');
  let meta: Meta = {};
  if (ext !== '.ipynb' && ext !== '.txt' && /^(---|\+\+\+)\s*\n/.test(body)) {
    try {
      const parsed = frontMatter<Meta>(body);
      meta = parsed.attributes && typeof parsed.attributes === 'object' ? parsed.attributes : {};
      body = parsed.body;
    } catch {
      // Malformed front matter: the text stays as it is.
    }
  }
  let markdown: string;
  if (ext === '.mdx') markdown = mdxToMarkdown(body);
  else if (ext === '.rst') markdown = rstToMarkdown(body);
  else if (ext === '.ipynb') markdown = notebookToMarkdown(body);
  else markdown = body;
  const description = typeof meta.description === 'string' ? meta.description.trim() : '';
  if (description) markdown = `${description}\n\n${markdown}`;
  const title = str(meta.title) || str(meta.sidebar_label) || firstHeading(markdown) || fileTitle(file);
  return { markdown, title };
}

/** A documentation file's snippets; every one carries the file (sourceFile) so a refresh can reuse them. */
export function documentSnippets(file: string, text: string, url: string): SnippetInput[] {
  const page = documentPage(file, text);
  const snippets = markdownToSnippets(page.markdown, { sourceId: url, pageTitle: page.title, breadcrumb: [page.title] });
  for (const s of snippets) s.sourceFile = file;
  return snippets;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

function firstHeading(markdown: string): string {
  const m = /^ {0,3}#[ \t]+(?![ \t])(.+)$/m.exec(markdown);
  return m ? withoutClosingHashes(m[1]!).replace(/[`*_]/g, '').trim() : '';
}

/** `docs/getting-started.md` -> "Getting started"; a README is named by its folder. */
function fileTitle(file: string): string {
  const base = path.posix.basename(file).replace(/\.[^.]+$/, '');
  const name = /^(readme|index)$/i.test(base) ? path.posix.basename(path.posix.dirname(file)) || base : base;
  const words = name.replace(/[-_]+/g, ' ').trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : file;
}
