import { z } from 'zod';
import type { LibraryMeta, SnippetInput } from '../../lib/model.ts';
import { parseLibraryId } from '../../lib/model.ts';

/**
 * The import bundle library shape of the interface spec, validated piecewise so that a streaming
 * importer can check one snippet at a time. `version` (top level) or a tag in `project`
 * (`/owner/repo/v1.2.3`, `/owner/repo@v1.2.3`) imports that version beside the others.
 */
export const bundleCodeSnippetSchema = z.object({
  id: z.string().min(1),
  title: z.string(),
  description: z.string(),
  language: z.string(),
  codeList: z.array(z.object({ language: z.string(), code: z.string() })).min(1),
  tokens: z.number().int().nonnegative().optional(),
  pageTitle: z.string().optional(),
  breadcrumb: z.string().optional(),
  isDynamic: z.boolean().optional(),
  sourceFile: z.string().optional(),
});

export const bundleInfoSnippetSchema = z.object({
  id: z.string().min(1),
  content: z.string().min(1),
  breadcrumb: z.string().optional(),
  tokens: z.number().int().nonnegative().optional(),
  pageTitle: z.string().optional(),
  /** Our addition (exports write it): the snippet's short title, used for ranking; default: its last breadcrumb, else its page title. */
  title: z.string().optional(),
});

/** Library fields without the snippet arrays. */
export const bundleHeaderSchema = z.object({
  project: z.string().min(1).max(500),
  title: z.string().min(1),
  description: z.string().default(''),
  type: z.string().default('repo'),
  language: z.string().default('en'),
  branch: z.string().optional(),
  docsRepoUrl: z.string().optional(),
  docsSiteUrl: z.string().optional(),
  totalTokens: z.number().int().nonnegative().optional(),
  version: z.string().min(1).max(100).optional(),
  trustScore: z.number().optional(),
  stars: z.number().int().optional(),
  license: z.string().optional(),
  verified: z.boolean().optional(),
  /** Our addition (exports write it): where the documentation was taken from (a crawl's start page, a specification's URL). */
  sourceUrl: z.string().optional(),
});

export type BundleCodeSnippet = z.infer<typeof bundleCodeSnippetSchema>;
export type BundleInfoSnippet = z.infer<typeof bundleInfoSnippetSchema>;
export type BundleHeader = z.infer<typeof bundleHeaderSchema>;

/** Fields a bundle library must carry; a missing one is reported by name. */
export const REQUIRED_LIBRARY_FIELDS = ['project', 'title', 'codeSnippets', 'infoSnippets'] as const;

const sourceTypes: Record<string, LibraryMeta['sourceType']> = {
  repo: 'repo',
  github: 'repo',
  gitlab: 'repo',
  bitbucket: 'repo',
  website: 'website',
  websites: 'website',
  openapi: 'openapi',
  llmstxt: 'llmstxt',
  files: 'files',
  confluence: 'confluence',
};

/** Library ID and version tag of a bundle library, or null when `project` is not a library ID. */
export function bundleTarget(header: BundleHeader): { id: string; tag: string } | null {
  const parsed = parseLibraryId(header.project);
  if (!parsed) return null;
  return { id: parsed.id, tag: parsed.tag ?? header.version ?? '' };
}

export function bundleMeta(header: BundleHeader, id: string): LibraryMeta {
  return {
    id,
    title: header.title,
    description: header.description,
    sourceType: sourceTypes[header.type.toLowerCase()] ?? 'repo',
    sourceUrl: header.sourceUrl ?? null,
    language: header.language,
    branch: header.branch ?? null,
    docsRepoUrl: header.docsRepoUrl ?? null,
    docsSiteUrl: header.docsSiteUrl ?? null,
    trustScore: header.trustScore ?? null,
    stars: header.stars ?? null,
    license: header.license ?? null,
    verified: header.verified ?? false,
  };
}

function pageTitleOf(id: string, title: string): string {
  // Bundles carry no page title; the page's file or path name is the best offline stand-in.
  try {
    const u = new URL(id);
    const last = u.pathname.split('/').filter(Boolean).pop() ?? u.hostname;
    return decodeURIComponent(last.replace(/\.(md|mdx|html?)$/i, '')).replace(/[-_]+/g, ' ');
  } catch {
    return title;
  }
}

export function codeSnippetInput(s: BundleCodeSnippet): SnippetInput {
  return {
    kind: 'code',
    sourceId: s.id,
    title: s.title,
    description: s.description,
    language: s.language || s.codeList[0]?.language || '',
    pageTitle: s.pageTitle ?? pageTitleOf(s.id, s.title),
    breadcrumb: s.breadcrumb,
    codeList: s.codeList,
    tokens: s.tokens,
    isDynamic: s.isDynamic,
    sourceFile: s.sourceFile,
  };
}

export function infoSnippetInput(s: BundleInfoSnippet): SnippetInput {
  return {
    kind: 'info',
    sourceId: s.id,
    content: s.content,
    breadcrumb: s.breadcrumb,
    pageTitle: s.pageTitle ?? pageTitleOf(s.id, ''),
    tokens: s.tokens,
    title: s.title,
  };
}
