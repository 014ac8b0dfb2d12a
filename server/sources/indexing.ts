import fs from 'node:fs';
import path from 'node:path';
import type { Stores } from '../store/stores.ts';
import type { JobQueue, JobContext } from '../jobs/queue.ts';
import type { LibraryWriter } from '../ingest/writer.ts';
import type { LibraryVisibility, SourceType } from '../../lib/model.ts';
import { runVersionJob, type VersionSink } from '../ingest/version-job.ts';
import type { StagedFiles } from '../ingest/staged-files.ts';
import { ApiError } from '../../lib/errors.ts';
import { loadOpenApi } from './openapi-load.ts';
import { openApiToSnippets } from './openapi.ts';
import { llmsKindOf, parseLlmsTxt, llmsTxtSnippets, linkedDocumentSnippets, type LlmsLink } from './llmstxt.ts';
import type { DocumentKind } from './sniff.ts';
import { pdfToMarkdown } from './pdf.ts';
import { docxToMarkdown } from './docx.ts';
import { markdownToSnippets } from './markdown.ts';
import { stripExt } from './names.ts';
import { LIMITS } from '../contracts/limits.ts';

/**
 * The source jobs: each turns a request's staged input (written by SourceService) into one new
 * library version through the writer. Payloads name staged paths relative to the data dir (absolute
 * in jobs queued before: path.resolve keeps those as they are).
 */

export const JOB_KINDS = { openapi: 'source-openapi', llmstxt: 'source-llmstxt', files: 'source-files' } as const;

export interface OpenApiPayload {
  libraryId: string;
  title: string;
  description: string;
  sourceUrl: string;
  stagedFile: string;
  stagedDir: string;
  teamspaceId: number | null;
  /** The new library's visibility (absent in jobs queued before it existed: the store's default for the owner). */
  visibility?: LibraryVisibility;
}

export interface LlmsPayload {
  libraryId: string;
  title: string;
  description: string;
  url: string;
  stagedFile: string;
  stagedDir: string;
  teamspaceId: number | null;
  /** The new library's visibility (absent in jobs queued before it existed: the store's default for the owner). */
  visibility?: LibraryVisibility;
}

export interface FilesPayload {
  libraryId: string;
  title: string;
  description: string;
  stagedDir: string;
  teamspaceId: number | null;
  /** The new library's visibility (absent in jobs queued before it existed: the store's default for the owner). */
  visibility?: LibraryVisibility;
  files: { path: string; name: string; kind: DocumentKind; size: number }[];
}

export interface IndexingDeps {
  store: Stores;
  writer: LibraryWriter;
  /** The staged inputs on this node, fetched when another node staged them. */
  staged: Pick<StagedFiles, 'obtain' | 'forget'>;
  /** Deletes a staged input folder on this node (the service keeps deletion inside its staging root). */
  removeStaging(dir: string): void;
  /** Fetches a document an llms.txt links to, as markdown; the network policy belongs to the service. */
  fetchLinkedDocument(url: string, signal: AbortSignal): Promise<string>;
}

/** Registers the three job kinds on the queue. */
export function registerIndexers(jobs: JobQueue, deps: IndexingDeps): void {
  jobs.register<OpenApiPayload>(JOB_KINDS.openapi, (ctx) => runStaged(deps, ctx, 'openapi', (sink) => indexOpenApi(deps, ctx, sink)));
  jobs.register<LlmsPayload>(JOB_KINDS.llmstxt, (ctx) => runStaged(deps, ctx, 'llmstxt', (sink) => indexLlmsTxt(deps, ctx, sink)));
  jobs.register<FilesPayload>(JOB_KINDS.files, (ctx) => runStaged(deps, ctx, 'files', (sink) => indexFiles(deps, ctx, sink)));
}

/** A staged input's bytes, from this node's disk or fetched from the shared copy. */
async function readStaged(deps: IndexingDeps, name: string): Promise<Buffer> {
  const file = await deps.staged.obtain(name);
  if (file === null) throw new Error(`The staged input ${name} is missing; submit it again.`);
  return fs.promises.readFile(file);
}

/** Runs a source job in the version-build frame; the staged input goes when the job ends. */
async function runStaged<
  P extends { libraryId: string; title: string; description: string; stagedDir: string; teamspaceId: number | null; visibility?: LibraryVisibility },
>(deps: IndexingDeps, ctx: JobContext<P>, sourceType: SourceType, index: (sink: VersionSink) => Promise<void>): Promise<void> {
  const p = ctx.job.payload;
  const sourceUrl = 'sourceUrl' in p ? String(p.sourceUrl) : 'url' in p ? String(p.url) : null;
  await runVersionJob(deps, ctx, {
    meta: { id: p.libraryId, title: p.title, description: p.description, sourceType, teamspaceId: p.teamspaceId, visibility: p.visibility, sourceUrl },
    produce: index,
    nothingIndexed: () => new ApiError('validation_error', 'No content could be extracted; nothing was indexed.'),
    cleanup: async () => {
      deps.removeStaging(p.stagedDir);
      await deps.staged.forget([p.stagedDir]);
    },
  });
}

async function indexOpenApi(deps: IndexingDeps, ctx: JobContext<OpenApiPayload>, sink: VersionSink): Promise<void> {
  const p = ctx.job.payload;
  sink.report({ phase: 'parsing' }, true);
  const text = (await readStaged(deps, p.stagedFile)).toString('utf8');
  const api = await loadOpenApi(text, path.posix.basename(p.sourceUrl), { validate: false });
  const snippets = openApiToSnippets(api, { sourceUrl: p.sourceUrl, title: p.title });
  await sink.add(snippets);
  sink.report({ phase: 'indexing', operations: api.operations, done: snippets.length, total: snippets.length }, true);
}

async function indexLlmsTxt(deps: IndexingDeps, ctx: JobContext<LlmsPayload>, sink: VersionSink): Promise<void> {
  const p = ctx.job.payload;
  const text = (await readStaged(deps, p.stagedFile)).toString('utf8');
  const doc = parseLlmsTxt(text, p.url);
  const own = llmsTxtSnippets(doc, p.url, p.title);
  await sink.add(own);
  const kind = llmsKindOf(p.url);
  const links = kind === 'full' ? [] : uniqueLinks(doc.links, p.url).slice(0, LIMITS.llmsMaxLinks);
  const skipped = kind === 'full' ? 0 : Math.max(0, uniqueLinks(doc.links, p.url).length - LIMITS.llmsMaxLinks);
  const errors: { url: string; error: string }[] = [];
  let fetched = 0;
  let done = 0;
  const deadline = Date.now() + LIMITS.llmsTotalMs;
  const progress = (force = false) =>
    sink.report(
      {
        phase: links.length ? 'fetching links' : 'indexing',
        links: links.length,
        linksDone: done,
        linksFetched: fetched,
        linksFailed: errors.length,
        linksSkipped: skipped,
        errors: errors.slice(0, 50),
      },
      force,
    );
  progress(true);
  let next = 0;
  const worker = async () => {
    while (next < links.length) {
      const link = links[next++]!;
      sink.checkCancelled();
      if (Date.now() > deadline) {
        errors.push({ url: link.url, error: 'skipped: the time limit for linked documents was reached' });
        done++;
        continue;
      }
      try {
        const markdown = await deps.fetchLinkedDocument(link.url, ctx.signal);
        const snippets = linkedDocumentSnippets(markdown, link, p.title);
        await sink.add(snippets);
        fetched++;
      } catch (err) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        errors.push({ url: link.url, error: err instanceof Error ? err.message : String(err) });
      }
      done++;
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIMITS.llmsLinkConcurrency, links.length) }, worker));
  progress(true);
}

async function indexFiles(deps: IndexingDeps, ctx: JobContext<FilesPayload>, sink: VersionSink): Promise<void> {
  const p = ctx.job.payload;
  const results: { name: string; state: 'pending' | 'done' | 'failed'; snippets?: number; error?: string }[] = p.files.map((f) => ({
    name: f.name,
    state: 'pending',
  }));
  sink.report({ phase: 'extracting', files: results }, true);
  for (let i = 0; i < p.files.length; i++) {
    sink.checkCancelled();
    const f = p.files[i]!;
    try {
      const data = await readStaged(deps, f.path);
      const fallback = stripExt(path.posix.basename(f.name));
      const doc = f.kind === 'pdf' ? await pdfToMarkdown(new Uint8Array(data), fallback, { signal: ctx.signal }) : await docxToMarkdown(data, fallback);
      const folders = path.posix.dirname(f.name) === '.' ? [] : path.posix.dirname(f.name).split('/');
      const snippets = markdownToSnippets(doc.markdown, {
        sourceId: `upload://files/${p.libraryId.split('/').pop()}/${f.name.split('/').map(encodeURIComponent).join('/')}`,
        pageTitle: doc.title,
        breadcrumb: [...folders, doc.title],
      });
      if (snippets.length === 0) throw new ApiError('validation_error', 'no text could be extracted (a scanned document without a text layer?)');
      const stored = await sink.add(snippets);
      results[i] = { name: f.name, state: 'done', snippets: stored };
    } catch (err) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      results[i] = { name: f.name, state: 'failed', error: err instanceof Error ? err.message : String(err) };
    }
    sink.report({ phase: 'extracting', files: results }, true);
  }
  const failed = results.filter((r) => r.state === 'failed');
  if (failed.length === results.length)
    throw new ApiError('validation_error', `No document could be read: ${failed.map((r) => `${r.name}: ${r.error}`).join('; ')}`);
}

function uniqueLinks(links: LlmsLink[], self: string): LlmsLink[] {
  const seen = new Set<string>([stripHash(self)]);
  const out: LlmsLink[] = [];
  for (const l of links) {
    if (!/^https?:/.test(l.url)) continue;
    const key = stripHash(l.url);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ ...l, url: key });
  }
  return out;
}

function stripHash(url: string): string {
  const u = new URL(url);
  u.hash = '';
  return u.href;
}
