import type { StoredSnippet } from '../../lib/model.ts';
import type { CodeSnippetJson, ContextResponse, ContextRules, InfoSnippetJson, Rendered } from './contracts.ts';

/**
 * JSON and text renderings of one ranked answer. Both are built from the same list, so the text
 * body holds exactly the snippets of the JSON body, in rank order (see docs/retrieval.md).
 */

/** Between two snippets of the text layout: a blank line, 32 hyphens, a blank line. */
export const TEXT_SEPARATOR = `\n\n${'-'.repeat(32)}\n\n`;

export interface RenderItem {
  snippet: StoredSnippet;
  libraryId: string;
}

export function codeSnippetJson(s: StoredSnippet): CodeSnippetJson {
  const out: CodeSnippetJson = {
    codeTitle: s.title,
    codeDescription: s.description,
    codeLanguage: s.language,
    codeTokens: s.tokens,
    codeId: s.sourceId,
    pageTitle: s.pageTitle,
    codeList: s.codeList,
  };
  if (s.isDynamic) out.isDynamic = true;
  if (s.sourceFile) out.sourceFile = s.sourceFile;
  return out;
}

export function infoSnippetJson(s: StoredSnippet): InfoSnippetJson {
  const out: InfoSnippetJson = { content: s.content, contentTokens: s.tokens, pageId: s.sourceId };
  if (s.breadcrumb) out.breadcrumb = s.breadcrumb;
  return out;
}

/** True when any rule list is non-empty. */
export function hasRules(rules: ContextRules | null | undefined): rules is ContextRules {
  return !!rules && rules.global.length + rules.libraryOwn.length + rules.libraryTeam.length > 0;
}

/** ContextResponse: both arrays always present (empty when nothing matched); `rules` only when there are any. */
export function toContextJson(items: RenderItem[], rules?: ContextRules | null): ContextResponse {
  const out: ContextResponse = {
    codeSnippets: items.filter((i) => i.snippet.kind === 'code').map((i) => codeSnippetJson(i.snippet)),
    infoSnippets: items.filter((i) => i.snippet.kind === 'info').map((i) => infoSnippetJson(i.snippet)),
  };
  if (hasRules(rules)) out.rules = { global: rules.global, libraryOwn: rules.libraryOwn, libraryTeam: rules.libraryTeam };
  return out;
}

/** Rules in the order they apply: team-wide, the library owner's, the team's for this library. */
export function flattenRules(rules: ContextRules | null | undefined): string[] {
  if (!rules) return [];
  return [...rules.global, ...rules.libraryOwn, ...rules.libraryTeam];
}

function fence(language: string, code: string): string {
  // A fence longer than any backtick run inside the code, so embedded fences cannot close it.
  const longest = Math.max(2, ...[...code.matchAll(/`{3,}/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${language}\n${code.replace(/\n+$/, '')}\n${ticks}`;
}

/** Title line of a snippet: codeTitle for code; the heading path, else the page title, for prose. */
export function snippetTitle(s: StoredSnippet): string {
  if (s.kind === 'code') return s.title || s.pageTitle || s.sourceId;
  return s.breadcrumb || s.pageTitle || s.title || s.sourceId;
}

/** One snippet in the text layout. */
export function renderSnippetText(item: RenderItem, opts: { showLibrary?: boolean } = {}): string {
  const s = item.snippet;
  const parts: string[] = [`### ${snippetTitle(s)}`];
  parts.push(opts.showLibrary && item.libraryId ? `Source: ${s.sourceId}\nLibrary: ${item.libraryId}` : `Source: ${s.sourceId}`);
  if (s.kind === 'code') {
    if (s.description.trim()) parts.push(s.description.trim());
    for (const c of s.codeList) parts.push(fence(c.language, c.code));
  } else {
    parts.push(s.content.trim());
  }
  return parts.join('\n\n');
}

/** The rules block that opens a text answer. */
export function renderRulesText(rules: string[]): string {
  return ['### Rules', rules.map((r) => `- ${r}`).join('\n')].join('\n\n');
}

/**
 * The text layout: an optional rules block, then every snippet (`### title`, blank line,
 * `Source: url`, blank line, description or content, one fenced block per code example),
 * all joined by TEXT_SEPARATOR.
 */
export function renderText(items: RenderItem[], opts: { showLibrary?: boolean; rules?: string[] } = {}): string {
  const blocks: string[] = [];
  if (opts.rules && opts.rules.length) blocks.push(renderRulesText(opts.rules));
  for (const item of items) blocks.push(renderSnippetText(item, opts));
  return blocks.join(TEXT_SEPARATOR);
}

/** An answer whose JSON and text are built on first read: a route sends only one of them. */
export function lazyRendered<J>(json: () => J, text: () => string, headers: Record<string, string>): Rendered<J> {
  let j: { v: J } | undefined;
  let t: string | undefined;
  return {
    get json() {
      return (j ??= { v: json() }).v;
    },
    get text() {
      return (t ??= text());
    },
    headers,
  };
}
