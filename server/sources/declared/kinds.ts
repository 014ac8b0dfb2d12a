import { z } from 'zod';
import { LIBRARY_VISIBILITIES } from '../../../lib/model.ts';
import type { Submitter } from '../../../lib/owner.ts';
import { libraryIdFor } from '../../../crawler/url.ts';
import { urlSlug } from '../names.ts';
import { MAX_CRAWL_PAGES } from '../../contracts/sources.ts';
import { parseRepoUrl, type RepoAddress } from '../git/address.ts';

/**
 * The kinds of source a sources.yaml entry may declare. Each entry is a mapping with exactly one
 * kind key (its value: the address) and that kind's options. A kind says which library the entry
 * becomes, and how to queue its indexing through the same service the API uses.
 *
 * A new source is one more entry in DECLARED_KINDS: its key, a zod schema of its options,
 * `libraryId` as its service assigns it, and `submit` calling that service; reconcile, pruning,
 * schedules and the line-numbered validation need nothing else.
 */

const url = z.string().trim().url('must be an http(s) URL').max(2048);
const schedule = z.string().trim().min(1).max(100).describe('cron expression: re-index on this schedule');
const common = { schedule: schedule.optional(), visibility: z.enum(LIBRARY_VISIBILITIES).optional() };

export interface SubmitContext {
  /** Queues a crawl (CrawlService.submit). */
  crawl(
    req: {
      websiteUrl: string;
      maxPages?: number;
      maxDepth?: number | null;
      excludePatterns?: string[];
      name?: string | null;
      description?: string | null;
      respectRobots?: boolean | null;
      force: boolean;
    },
    who: Submitter,
  ): Promise<{ libraryId: string; jobId: number }>;
  /** Fetches, checks and queues an OpenAPI document (SourceService.submitOpenApiUrl). */
  openApi(req: { url: string; force: boolean }, who: Submitter): Promise<{ libraryName: string; jobId: number }>;
  /** Fetches, checks and queues an llms.txt (SourceService.submitLlmsTxt). */
  llmsTxt(req: { url: string; force: boolean }, who: Submitter): Promise<{ libraryName: string; jobId: number }>;
  /** Checks and queues a Git repository (GitSourceService.submit, as POST /api/parse). */
  git(
    req: { repoUrl: string; branch?: string; folders?: string[]; excludeFolders?: string[]; excludeFiles?: string[]; force: boolean },
    who: Submitter,
  ): Promise<{ libraryId: string; jobId: number }>;
  /** Requires the license feature for this kind of source. */
  license(feature?: string): void;
}

export interface DeclaredKind<E extends Record<string, unknown> = Record<string, unknown>> {
  /** The YAML key that names the kind and holds the address. */
  key: string;
  /** The entry with its options; unknown keys are refused. */
  schema: z.ZodType<E>;
  /** The library the entry becomes (as the kind's service names it). */
  libraryId(entry: E): string;
  /** Queues (re)indexing; `force`: replace what is indexed. Returns the library and the job. */
  submit(entry: E, force: boolean, who: Submitter, ctx: SubmitContext): Promise<{ libraryId: string; jobId: number }>;
}

const website = z
  .object({
    website: url,
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().trim().max(2000).optional(),
    maxPages: z.number().int().min(1).max(MAX_CRAWL_PAGES).optional(),
    maxDepth: z.number().int().min(0).max(100).optional(),
    excludePatterns: z.array(z.string().trim().min(1).max(500)).max(100).optional(),
    respectRobots: z.boolean().optional(),
    ...common,
  })
  .strict();

const llmstxt = z.object({ llmstxt: url, ...common }).strict();
const paths = z.array(z.string().trim().min(1).max(500)).max(100).optional();
const git = z
  .object({
    // https://, ssh://, git:// or scp-like git@host:owner/repo: parseRepoUrl decides (as POST /api/parse does).
    git: z
      .string()
      .trim()
      .min(1)
      .max(2048)
      .refine((v) => tryRepo(v) !== null, 'must be a Git repository URL (https://, ssh://, git:// or git@host:owner/repo)'),
    branch: z.string().trim().min(1).max(255).optional(),
    folders: paths,
    excludeFolders: paths,
    excludeFiles: paths,
    ...common,
  })
  .strict();
const openapi = z.object({ openapi: url, ...common }).strict();

export const DECLARED_KINDS: readonly DeclaredKind[] = [
  kind({
    key: 'website',
    schema: website,
    libraryId: (e) => libraryIdFor(withoutHash(e.website)),
    async submit(e, force, who, ctx) {
      ctx.license('crawl');
      const r = await ctx.crawl(
        {
          websiteUrl: e.website,
          maxPages: e.maxPages,
          maxDepth: e.maxDepth ?? null,
          excludePatterns: e.excludePatterns,
          name: e.name ?? null,
          description: e.description ?? null,
          respectRobots: e.respectRobots ?? null,
          force,
        },
        who,
      );
      return { libraryId: r.libraryId, jobId: r.jobId };
    },
  }),
  kind({
    key: 'llmstxt',
    schema: llmstxt,
    libraryId: (e) => `/llmstxt/${urlSlug(e.llmstxt)}`,
    async submit(e, force, who, ctx) {
      ctx.license();
      const r = await ctx.llmsTxt({ url: e.llmstxt, force }, who);
      return { libraryId: r.libraryName, jobId: r.jobId };
    },
  }),
  kind({
    key: 'git',
    schema: git,
    libraryId: (e) => tryRepo(e.git)!.libraryId,
    async submit(e, force, who, ctx) {
      ctx.license();
      const r = await ctx.git(
        { repoUrl: e.git, branch: e.branch, folders: e.folders, excludeFolders: e.excludeFolders, excludeFiles: e.excludeFiles, force },
        who,
      );
      return { libraryId: r.libraryId, jobId: r.jobId };
    },
  }),
  kind({
    key: 'openapi',
    schema: openapi,
    libraryId: (e) => `/openapi/${urlSlug(e.openapi)}`,
    async submit(e, force, who, ctx) {
      ctx.license();
      const r = await ctx.openApi({ url: e.openapi, force }, who);
      return { libraryId: r.libraryName, jobId: r.jobId };
    },
  }),
];

/** Keeps each kind's entry type inside its own functions while the list holds them alike. */
function kind<E extends Record<string, unknown>>(k: DeclaredKind<E>): DeclaredKind {
  return k as unknown as DeclaredKind;
}

function tryRepo(raw: string): RepoAddress | null {
  try {
    return parseRepoUrl(raw);
  } catch {
    return null;
  }
}

function withoutHash(raw: string): string {
  const u = new URL(raw);
  u.hash = '';
  return u.href;
}
