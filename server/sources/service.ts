import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/index.ts';
import type { JobQueue, JobContext } from '../jobs/queue.ts';
import { JobCancelled, throwIfCancelled } from '../jobs/queue.ts';
import type { LibraryWriter, VersionBuild } from '../ingest/writer.ts';
import type { LibraryMeta, SnippetInput, SourceType } from '../model.ts';
import { ApiError } from '../errors.ts';
import { safeFetch } from '../net/guard.ts';
import { loadOpenApi } from './openapi-load.ts';
import { openApiToSnippets } from './openapi.ts';
import { llmsKindOf, parseLlmsTxt, llmsTxtSnippets, linkedDocumentSnippets, type LlmsLink } from './llmstxt.ts';
import { sniffDocument, type DocumentKind } from './sniff.ts';
import { pdfToMarkdown } from './pdf.ts';
import { docxToMarkdown } from './docx.ts';
import { markdownToSnippets } from './markdown.ts';
import { htmlToMarkdown } from './html.ts';
import { decodeText, checkRelativePath, urlSlug, titleSlug, safeName, stripExt, firstParagraph } from './names.ts';

/**
 * The OpenAPI, llms.txt and PDF/DOCX sources. Requests are validated synchronously (a URL is
 * fetched and parsed while the client waits, uploads are checked by content), the input is staged
 * under <dataDir>/staging/sources/, and a durable job turns it into snippets through the writer.
 */

export const LIMITS = {
  openApiUploadBytes: 10 * 1024 * 1024,
  openApiUrlBytes: 20 * 1024 * 1024,
  llmsTxtBytes: 10 * 1024 * 1024,
  llmsLinkBytes: 5 * 1024 * 1024,
  llmsMaxLinks: 200,
  llmsLinkConcurrency: 4,
  llmsTotalMs: 15 * 60_000,
  files: 50,
  fileBytes: 50 * 1024 * 1024,
  totalBytes: 200 * 1024 * 1024,
} as const;

export const JOB_KINDS = { openapi: 'source-openapi', llmstxt: 'source-llmstxt', files: 'source-files' } as const;

type Report = (progress: Record<string, unknown>) => void;

/** Who submits: an API key's principal over HTTP, the default teamspace (no member) from the CLI. */
export interface Submitter {
  memberId: number | null;
  teamspaceId: number;
}

export interface SubmissionResult {
  libraryName: string;
  message: string;
  jobId: number;
}

export interface StagedUpload {
  /** Path of the uploaded bytes inside the request's staging directory. */
  path: string;
  originalName: string;
  size: number;
}

interface OpenApiPayload {
  libraryId: string;
  title: string;
  description: string;
  sourceUrl: string;
  stagedFile: string;
  stagedDir: string;
  teamspaceId: number | null;
}

interface LlmsPayload {
  libraryId: string;
  title: string;
  description: string;
  url: string;
  stagedFile: string;
  stagedDir: string;
  teamspaceId: number | null;
}

interface FilesPayload {
  libraryId: string;
  title: string;
  description: string;
  stagedDir: string;
  teamspaceId: number | null;
  files: { path: string; name: string; kind: DocumentKind; size: number }[];
}

export interface SourceServiceDeps {
  config: Config;
  store: Store;
  jobs: JobQueue;
  writer: LibraryWriter;
  log: Logger;
}

export class SourceService {
  readonly stagingRoot: string;

  constructor(private readonly deps: SourceServiceDeps) {
    this.stagingRoot = path.join(deps.config.dataDir, 'staging', 'sources');
  }

  /** A fresh directory for one request's staged input; the caller removes it when the request fails. */
  newStagingDir(): string {
    fs.mkdirSync(this.stagingRoot, { recursive: true });
    return fs.mkdtempSync(path.join(this.stagingRoot, 'req-'));
  }

  removeStaging(dir: string): void {
    // Only ever delete inside the staging root.
    if (path.resolve(dir).startsWith(path.resolve(this.stagingRoot) + path.sep)) fs.rmSync(dir, { recursive: true, force: true });
  }

  private policy() {
    return { allowPrivate: this.deps.config.crawlAllowPrivate };
  }

  // ---------------------------------------------------------------- OpenAPI

  async submitOpenApiUrl(input: { url: string; force: boolean }, principal: Submitter): Promise<SubmissionResult> {
    const res = await safeFetch(input.url, { policy: this.policy(), maxBytes: LIMITS.openApiUrlBytes, timeoutMs: this.deps.config.crawlPageTimeoutMs, headers: { accept: 'application/json, application/yaml, text/yaml, */*' } });
    if (res.status < 200 || res.status > 299) throw new ApiError('fetch_failed', `Fetching ${input.url} answered HTTP ${res.status}; expected an OpenAPI document.`);
    const text = decodeText(res.body);
    const name = path.posix.basename(new URL(res.url).pathname) || new URL(res.url).host;
    const api = await loadOpenApi(text, name);
    const libraryId = `/openapi/${urlSlug(input.url)}`;
    return this.enqueueStaged(JOB_KINDS.openapi, libraryId, input.force, text, (stagedDir, stagedFile): OpenApiPayload => ({
      libraryId, title: api.title, description: firstParagraph(api.description), sourceUrl: res.url, stagedFile, stagedDir, teamspaceId: null,
    }), principal, `OpenAPI specification "${api.title}" (${api.operations} operations) queued for indexing as ${libraryId}.`);
  }

  async submitOpenApiUpload(input: { fileName: string; data: Buffer; title?: string; description?: string; force: boolean }, principal: Submitter): Promise<SubmissionResult> {
    const text = decodeText(input.data);
    const api = await loadOpenApi(text, input.fileName || 'openapiFile');
    const title = input.title?.trim() || api.title;
    const libraryId = `/openapi/${titleSlug(title)}`;
    return this.enqueueStaged(JOB_KINDS.openapi, libraryId, input.force, text, (stagedDir, stagedFile): OpenApiPayload => ({
      libraryId, title, description: input.description?.trim() || firstParagraph(api.description), sourceUrl: `upload://openapi/${titleSlug(title)}/${safeName(input.fileName || 'openapi')}`,
      stagedFile, stagedDir, teamspaceId: principal.teamspaceId,
    }), principal, `OpenAPI specification "${title}" (${api.operations} operations) queued for indexing as ${libraryId}.`);
  }

  // ---------------------------------------------------------------- llms.txt

  async submitLlmsTxt(input: { url: string; force: boolean }, principal: Submitter): Promise<SubmissionResult> {
    const res = await safeFetch(input.url, { policy: this.policy(), maxBytes: LIMITS.llmsTxtBytes, timeoutMs: this.deps.config.crawlPageTimeoutMs, headers: { accept: 'text/markdown, text/plain, */*' } });
    if (res.status < 200 || res.status > 299) throw new ApiError('fetch_failed', `Fetching ${input.url} answered HTTP ${res.status}; expected an llms.txt file.`);
    const text = decodeText(res.body);
    if (!text.trim()) throw new ApiError('validation_error', `${input.url} is empty.`);
    if (/^\s*<(!doctype html|html[\s>])/i.test(text)) throw new ApiError('validation_error', `${input.url} is an HTML page, not an llms.txt file (markdown text was expected).`);
    if (text.includes('\u0000')) throw new ApiError('validation_error', `${input.url} is binary data, not an llms.txt file.`);
    const doc = parseLlmsTxt(text, res.url);
    if (!doc.title && doc.links.length === 0 && !/^#{1,6}\s/m.test(doc.text)) {
      throw new ApiError('validation_error', `${input.url} does not look like an llms.txt file: no "# Title" heading, no sections and no "- [title](url)" links.`);
    }
    const libraryId = `/llmstxt/${urlSlug(input.url)}`;
    const title = doc.title || new URL(res.url).host;
    const kind = llmsKindOf(res.url);
    const follow = kind === 'full' ? 0 : Math.min(doc.links.length, LIMITS.llmsMaxLinks);
    return this.enqueueStaged(JOB_KINDS.llmstxt, libraryId, input.force, doc.text, (stagedDir, stagedFile): LlmsPayload => ({
      libraryId, title, description: doc.summary, url: res.url, stagedFile, stagedDir, teamspaceId: null,
    }), principal, `${kind === 'full' ? 'llms-full.txt' : kind === 'small' ? 'llms-small.txt' : 'llms.txt'} "${title}" queued for indexing as ${libraryId}${follow ? ` (${follow} linked documents to fetch)` : ''}.`);
  }

  // ---------------------------------------------------------------- PDF / DOCX

  /**
   * Validates staged uploads (type by content, relative paths) and queues them as one library.
   * On error the caller removes stagedDir; on success the job owns it.
   */
  async submitFiles(
    input: { stagedDir: string; files: StagedUpload[]; relativePaths?: string[]; collectionName?: string; projectTitle?: string; description?: string; force: boolean },
    principal: Submitter,
  ): Promise<SubmissionResult> {
    if (input.files.length === 0) throw new ApiError('validation_error', 'documentFiles is required: upload at least one PDF or DOCX file.');
    if (input.relativePaths && input.relativePaths.length !== input.files.length) {
      throw new ApiError('validation_error', `relativePaths has ${input.relativePaths.length} entries for ${input.files.length} documentFiles; give one path per file, in the same order.`);
    }
    const names = input.files.map((f, i) => checkRelativePath(input.relativePaths?.[i] ?? f.originalName, i));
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n)) throw new ApiError('validation_error', `Two files have the same path "${n}"; paths must be unique.`);
      seen.add(n);
    }
    const problems: string[] = [];
    const files: FilesPayload['files'] = [];
    for (let i = 0; i < input.files.length; i++) {
      const f = input.files[i]!;
      const sniff = await sniffDocument(f.path);
      if (sniff.kind === null) problems.push(`${names[i]}: ${sniff.reason}`);
      else files.push({ path: f.path, name: names[i]!, kind: sniff.kind, size: f.size });
    }
    if (problems.length) {
      throw new ApiError('unsupported_media_type', `Only PDF and DOCX documents are accepted (checked by content). Rejected: ${problems.join('; ')}. Nothing was stored.`);
    }
    const title = input.projectTitle?.trim() || input.collectionName?.trim() || stripExt(path.posix.basename(names[0]!));
    const libraryId = `/files/${titleSlug(input.collectionName?.trim() || title)}`;
    this.assertNew(libraryId, input.force, principal);
    const payload: FilesPayload = { libraryId, title, description: input.description?.trim() ?? '', stagedDir: input.stagedDir, teamspaceId: principal.teamspaceId, files };
    const { id } = this.deps.jobs.enqueue(JOB_KINDS.files, payload, { libraryId, memberId: principal.memberId });
    return { libraryName: libraryId, message: `${files.length} document${files.length === 1 ? '' : 's'} queued for indexing as ${libraryId}.`, jobId: id };
  }

  // ---------------------------------------------------------------- shared

  /** Same input twice without force is a 409; so is a library with the same ID still being built. */
  private assertNew(libraryId: string, force: boolean, who: Submitter): void {
    // A library owned by another teamspace is never replaced, with or without force.
    const owner = this.deps.store.libraries.get(libraryId)?.teamspaceId ?? null;
    if (owner !== null && owner !== who.teamspaceId) throw new ApiError('conflict', `The library ID ${libraryId} is taken; choose another title or collection name.`);
    const active = Object.values(JOB_KINDS).flatMap((k) => this.deps.store.jobs.active(k, libraryId));
    if (active.length) throw new ApiError('conflict', `${libraryId} is already being indexed (job ${active[0]!.id}); wait for it to finish.`);
    if (force) return;
    if (this.deps.store.libraries.currentVersion(libraryId, '')) {
      throw new ApiError('conflict', `Library ${libraryId} already exists. Send force=true to index it again and replace it.`);
    }
  }

  private enqueueStaged<P>(kind: string, libraryId: string, force: boolean, text: string, payload: (stagedDir: string, stagedFile: string) => P, principal: Submitter, message: string): SubmissionResult {
    this.assertNew(libraryId, force, principal);
    const dir = this.newStagingDir();
    try {
      const file = path.join(dir, 'input.txt');
      fs.writeFileSync(file, text);
      const { id } = this.deps.jobs.enqueue(kind, payload(dir, file), { libraryId, memberId: principal.memberId });
      return { libraryName: libraryId, message, jobId: id };
    } catch (err) {
      this.removeStaging(dir);
      throw err;
    }
  }

  /**
   * Removes staged folders no queued or running job refers to (left by a job cancelled before it
   * started, or by a crash during a request), once they are older than maxAgeMs.
   */
  sweepStaging(maxAgeMs = 60 * 60_000): number {
    if (!fs.existsSync(this.stagingRoot)) return 0;
    const referenced = new Set<string>();
    for (const state of ['queued', 'running'] as const) {
      for (const kind of Object.values(JOB_KINDS)) {
        for (const job of this.deps.store.jobs.list({ state, kind, limit: 100_000 })) {
          const dir = (job.payload as { stagedDir?: unknown }).stagedDir;
          if (typeof dir === 'string') referenced.add(path.resolve(dir));
        }
      }
    }
    let removed = 0;
    for (const name of fs.readdirSync(this.stagingRoot)) {
      const full = path.join(this.stagingRoot, name);
      if (referenced.has(path.resolve(full))) continue;
      if (Date.now() - fs.statSync(full).mtimeMs < maxAgeMs) continue;
      this.removeStaging(full);
      removed++;
    }
    if (removed) this.deps.log.info({ removed }, 'removed abandoned staged source inputs');
    return removed;
  }

  /** Registers the three job kinds (and sweeps abandoned staged input at startup). */
  register(jobs: JobQueue): void {
    this.sweepStaging();
    jobs.register<OpenApiPayload>(JOB_KINDS.openapi, (ctx) => this.runStaged(ctx, 'openapi', (build, report) => this.indexOpenApi(ctx, build, report)));
    jobs.register<LlmsPayload>(JOB_KINDS.llmstxt, (ctx) => this.runStaged(ctx, 'llmstxt', (build, report) => this.indexLlmsTxt(ctx, build, report)));
    jobs.register<FilesPayload>(JOB_KINDS.files, (ctx) => this.runStaged(ctx, 'files', (build, report) => this.indexFiles(ctx, build, report)));
  }

  /**
   * Common frame of the jobs: begin a build, let the indexer add snippets, commit; on failure abort
   * and remove a library row that never had a version. The staged input is removed when the job
   * finishes or fails, but kept when the server shuts down (the job is requeued and reruns).
   */
  private async runStaged<P extends { libraryId: string; title: string; description: string; stagedDir: string; teamspaceId: number | null }>(
    ctx: JobContext<P>,
    sourceType: SourceType,
    index: (build: VersionBuild, report: Report) => Promise<void>,
  ): Promise<void> {
    const p = ctx.job.payload;
    let last: Record<string, unknown> = {};
    const report: Report = (progress) => {
      last = progress;
      ctx.progress(progress);
    };
    const meta: LibraryMeta = {
      id: p.libraryId, title: p.title, description: p.description, sourceType, teamspaceId: p.teamspaceId,
      sourceUrl: 'sourceUrl' in p ? String((p as { sourceUrl?: string }).sourceUrl) : 'url' in p ? String((p as { url?: string }).url) : null,
    };
    const existedBefore = this.deps.store.libraries.get(p.libraryId) !== null && this.deps.store.libraries.versions(p.libraryId).some((v) => v.state !== 'building');
    let build: VersionBuild | null = null;
    let finished = false;
    try {
      build = this.deps.writer.begin(meta, { jobId: ctx.job.id });
      await index(build, report);
      throwIfCancelled(ctx.signal);
      if (build.snippetCount === 0) throw new ApiError('validation_error', 'No content could be extracted; nothing was indexed.');
      const totals = build.commit();
      ctx.progress({ ...last, phase: 'done', snippets: totals.snippets, tokens: totals.tokens });
      finished = true;
    } catch (err) {
      build?.abort();
      if (!existedBefore && this.deps.store.libraries.get(p.libraryId) && !this.deps.store.libraries.versions(p.libraryId).length) this.deps.store.libraries.delete(p.libraryId);
      const shutdown = ctx.signal.aborted && !(ctx.signal.reason instanceof JobCancelled);
      finished = !shutdown;
      throw err;
    } finally {
      if (finished) this.removeStaging(p.stagedDir);
    }
  }

  private async indexOpenApi(ctx: JobContext<OpenApiPayload>, build: VersionBuild, report: Report): Promise<void> {
    const p = ctx.job.payload;
    report({ phase: 'parsing' });
    const text = fs.readFileSync(p.stagedFile, 'utf8');
    const api = await loadOpenApi(text, path.posix.basename(p.sourceUrl), { validate: false });
    const snippets = openApiToSnippets(api, { sourceUrl: p.sourceUrl, title: p.title });
    await addInBatches(build, snippets, ctx.signal, (done) => report({ phase: 'indexing', operations: api.operations, done, total: snippets.length }));
  }

  private async indexLlmsTxt(ctx: JobContext<LlmsPayload>, build: VersionBuild, report: Report): Promise<void> {
    const p = ctx.job.payload;
    const text = fs.readFileSync(p.stagedFile, 'utf8');
    const doc = parseLlmsTxt(text, p.url);
    const own = llmsTxtSnippets(doc, p.url, p.title);
    await build.add(own);
    const kind = llmsKindOf(p.url);
    const links = kind === 'full' ? [] : uniqueLinks(doc.links, p.url).slice(0, LIMITS.llmsMaxLinks);
    const skipped = kind === 'full' ? 0 : Math.max(0, uniqueLinks(doc.links, p.url).length - LIMITS.llmsMaxLinks);
    const errors: { url: string; error: string }[] = [];
    let fetched = 0;
    let done = 0;
    const deadline = Date.now() + LIMITS.llmsTotalMs;
    const progress = () => report({ phase: links.length ? 'fetching links' : 'indexing', links: links.length, linksDone: done, linksFetched: fetched, linksFailed: errors.length, linksSkipped: skipped, errors: errors.slice(0, 50) });
    progress();
    let next = 0;
    const worker = async () => {
      while (next < links.length) {
        const link = links[next++]!;
        throwIfCancelled(ctx.signal);
        if (Date.now() > deadline) {
          errors.push({ url: link.url, error: 'skipped: the time limit for linked documents was reached' });
          done++;
          continue;
        }
        try {
          const markdown = await this.fetchLinkedDocument(link.url, ctx.signal);
          const snippets = linkedDocumentSnippets(markdown, link, p.title);
          await build.add(snippets);
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
    progress();
  }

  private async fetchLinkedDocument(url: string, signal: AbortSignal): Promise<string> {
    const res = await safeFetch(url, { policy: this.policy(), maxBytes: LIMITS.llmsLinkBytes, timeoutMs: this.deps.config.crawlPageTimeoutMs, signal, headers: { accept: 'text/markdown, text/plain;q=0.9, text/html;q=0.5' } });
    if (res.status < 200 || res.status > 299) throw new ApiError('fetch_failed', `HTTP ${res.status}`);
    const type = (res.headers.get('content-type') ?? '').toLowerCase();
    if (/^(application\/pdf|image\/|audio\/|video\/|application\/(zip|octet-stream))/.test(type)) throw new ApiError('unsupported_media_type', `unsupported content type ${type}`);
    const text = decodeText(res.body);
    if (/html/.test(type) || /^\s*<(!doctype html|html[\s>])/i.test(text)) return htmlToMarkdown(mainHtml(text));
    return text;
  }

  private async indexFiles(ctx: JobContext<FilesPayload>, build: VersionBuild, report: Report): Promise<void> {
    const p = ctx.job.payload;
    const results: { name: string; state: 'pending' | 'done' | 'failed'; snippets?: number; error?: string }[] = p.files.map((f) => ({ name: f.name, state: 'pending' }));
    report({ phase: 'extracting', files: results });
    for (let i = 0; i < p.files.length; i++) {
      throwIfCancelled(ctx.signal);
      const f = p.files[i]!;
      try {
        const data = fs.readFileSync(f.path);
        const fallback = stripExt(path.posix.basename(f.name));
        const doc = f.kind === 'pdf' ? await pdfToMarkdown(new Uint8Array(data), fallback, { signal: ctx.signal }) : await docxToMarkdown(data, fallback);
        const folders = path.posix.dirname(f.name) === '.' ? [] : path.posix.dirname(f.name).split('/');
        const snippets = markdownToSnippets(doc.markdown, { sourceId: `upload://files/${p.libraryId.split('/').pop()}/${f.name.split('/').map(encodeURIComponent).join('/')}`, pageTitle: doc.title, breadcrumb: [...folders, doc.title] });
        if (snippets.length === 0) throw new ApiError('validation_error', 'no text could be extracted (a scanned document without a text layer?)');
        const stored = await addInBatches(build, snippets, ctx.signal);
        results[i] = { name: f.name, state: 'done', snippets: stored };
      } catch (err) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        results[i] = { name: f.name, state: 'failed', error: err instanceof Error ? err.message : String(err) };
      }
      report({ phase: 'extracting', files: results });
    }
    const failed = results.filter((r) => r.state === 'failed');
    if (failed.length === results.length) throw new ApiError('validation_error', `No document could be read: ${failed.map((r) => `${r.name}: ${r.error}`).join('; ')}`);
  }
}

async function addInBatches(build: VersionBuild, snippets: SnippetInput[], signal: AbortSignal, onProgress?: (done: number) => void): Promise<number> {
  let stored = 0;
  for (let i = 0; i < snippets.length; i += 200) {
    throwIfCancelled(signal);
    stored += await build.add(snippets.slice(i, i + 200));
    onProgress?.(Math.min(snippets.length, i + 200));
  }
  return stored;
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

/** The main content of an HTML page when it marks one (main/article), else the body. */
function mainHtml(html: string): string {
  const m = /<main[\s>][\s\S]*?<\/main>/i.exec(html) ?? /<article[\s>][\s\S]*?<\/article>/i.exec(html) ?? /<body[\s>][\s\S]*<\/body>/i.exec(html);
  return m ? m[0] : html;
}
