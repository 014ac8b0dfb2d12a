import type { StoredSnippet } from '../../lib/model.ts';
import type { CodeSnippetJson, ContextResponse, ContextRules, InfoSnippetJson, Rendered } from './answer-types.ts';
import type { Candidate } from './retrieve.ts';
import { sectionKey } from './source-url.ts';

/**
 * JSON and text renderings of one ranked answer. Both are built from the same list, so the text
 * body holds exactly the snippets of the JSON body, in rank order (see docs/retrieval.md).
 */

/** Between two snippets of the text layout: a blank line, 32 hyphens, a blank line. */
export const TEXT_SEPARATOR = `\n\n${'-'.repeat(32)}\n\n`;

export interface RenderItem {
  snippet: StoredSnippet;
  libraryId: string;
  /** Set on context pulled in for the hit before it (neighbours.ts): the text layout shows it in that hit's block. */
  via?: Candidate['via'];
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

/** A snippet's text: description and fenced code for code, content for prose (`shown`: text already in the block). */
function snippetBody(s: StoredSnippet, shown = ''): string[] {
  if (s.kind !== 'code') return [s.content.trim()];
  const description = s.description.trim();
  // A section's code pulled in for its prose usually repeats the prose's sentence before the code.
  return [...(description && !shown.includes(description) ? [description] : []), ...s.codeList.map((c) => fence(c.language, c.code))];
}

/** One snippet in the text layout, with the context pulled in for it (its `Context:` lines). */
export function renderSnippetText(item: RenderItem, opts: { showLibrary?: boolean; context?: RenderItem[] } = {}): string {
  const s = item.snippet;
  const parts: string[] = [`### ${snippetTitle(s)}`];
  parts.push(opts.showLibrary && item.libraryId ? `Source: ${s.sourceId}\nLibrary: ${item.libraryId}` : `Source: ${s.sourceId}`);
  parts.push(...snippetBody(s));
  const shown = s.kind === 'info' ? s.content : '';
  for (const c of opts.context ?? []) parts.push(`Context: ${c.snippet.sourceId}`, ...snippetBody(c.snippet, shown));
  return parts.join('\n\n');
}

/** The rules block that opens a text answer. */
export function renderRulesText(rules: string[]): string {
  return ['### Rules', rules.map((r) => `- ${r}`).join('\n')].join('\n\n');
}

/**
 * The text layout: an optional rules block, then one block per ranked section (`### title`, blank
 * line, `Source: url`, blank line, description or content, one fenced block per code example),
 * all joined by TEXT_SEPARATOR. Context pulled in for a hit (its section's code, its parent
 * section) and the section's later snippets follow in its block under a `Context: url` line: they
 * are not hits of their own, so the fifth block is the fifth section (docs/retrieval.md, "Text layout").
 */
export function renderText(items: RenderItem[], opts: { showLibrary?: boolean; rules?: string[] } = {}): string {
  // A section is one block: a later hit of a section already shown (its other code blocks, its
  // prose after its code) joins that block, with whatever context it brought. The map keeps the
  // order in which sections first appear, which is the blocks' order.
  const bySection = new Map<string, { hit: RenderItem; context: RenderItem[] }>();
  let current: { hit: RenderItem; context: RenderItem[] } | undefined;
  for (const item of items) {
    if (item.via && current) {
      current.context.push(item);
      continue;
    }
    const key = sectionKey(item.snippet);
    const shown = bySection.get(key);
    if (shown) {
      shown.context.push(item);
      current = shown;
      continue;
    }
    current = { hit: item, context: [] };
    bySection.set(key, current);
  }
  const blocks: string[] = [];
  if (opts.rules && opts.rules.length) blocks.push(renderRulesText(opts.rules));
  for (const g of bySection.values()) blocks.push(renderSnippetText(g.hit, { showLibrary: opts.showLibrary, context: g.context }));
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
