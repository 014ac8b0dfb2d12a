import { ownerConflict, type Submitter } from '../../lib/owner.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Stores } from '../store/stores.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { LibraryWriter } from '../ingest/writer.ts';
import { stagedName, type StagedFiles } from '../ingest/staged-files.ts';
import { ApiError } from '../../lib/errors.ts';
import { safeFetch } from '../../lib/net/guard.ts';
import { loadOpenApi } from './openapi-load.ts';
import { llmsKindOf, parseLlmsTxt } from './llmstxt.ts';
import { sniffDocument } from './sniff.ts';
import { htmlToMarkdown } from '../../lib/text/html-markdown.ts';
import { decodeText, checkRelativePath, urlSlug, titleSlug, safeName, stripExt, firstParagraph } from './names.ts';
import { LIMITS } from '../contracts/limits.ts';
import { JOB_KINDS, registerIndexers, type FilesPayload, type LlmsPayload, type OpenApiPayload } from './indexing.ts';

/**
 * The OpenAPI, llms.txt and PDF/DOCX sources. Requests are validated synchronously (a URL is
 * fetched and parsed while the client waits, uploads are checked by content), the input is staged
 * under <dataDir>/staging/sources/ (and shared with the other nodes, `staged`), and a durable job
 * (indexing.ts) turns it into snippets through the writer. Jobs name their inputs relative to the
 * data dir, so that whichever node runs one finds them in its own.
 */

export type { Submitter };

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

export interface SourceServiceDeps {
  config: Config;
  store: Stores;
  jobs: JobQueue;
  writer: LibraryWriter;
  log: Logger;
  /** Where the staged inputs are for the node that runs the job (on PostgreSQL, any node). */
  staged: StagedFiles;
}

const beingIndexed = (libraryId: string, jobId: number) =>
  new ApiError('conflict', `${libraryId} is already being indexed (job ${jobId}); wait for it to finish.`);

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

  /** Deletes a staged folder on this node (absolute, or relative to the data dir as jobs name it). */
  removeStaging(dir: string): void {
    const full = path.resolve(this.deps.config.dataDir, dir);
    // Only ever delete inside the staging root.
    if (full.startsWith(path.resolve(this.stagingRoot) + path.sep)) fs.rmSync(full, { recursive: true, force: true });
  }

  /** A staged path as jobs name it: relative to the data dir. */
  private nameOf(file: string): string {
    return stagedName(this.deps.config.dataDir, file);
  }

  /**
   * A user-given URL fetched through the address guard with the crawl's page timeout; an answer
   * other than 2xx throws fetch_failed with `failure(status)` as its message.
   */
  private async fetchOk(url: string, opts: { maxBytes: number; accept: string; signal?: AbortSignal }, failure: (status: number) => string) {
    const res = await safeFetch(url, {
      policy: { allowPrivate: this.deps.config.crawlAllowPrivate },
      maxBytes: opts.maxBytes,
      timeoutMs: this.deps.config.crawlPageTimeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      headers: { accept: opts.accept },
    });
    if (res.status < 200 || res.status > 299) throw new ApiError('fetch_failed', failure(res.status));
    return res;
  }

  // ---------------------------------------------------------------- OpenAPI

  async submitOpenApiUrl(input: { url: string; force: boolean }, principal: Submitter): Promise<SubmissionResult> {
    const res = await this.fetchOk(
      input.url,
      { maxBytes: LIMITS.openApiUrlBytes, accept: 'application/json, application/yaml, text/yaml, */*' },
      (status) => `Fetching ${input.url} answered HTTP ${status}; expected an OpenAPI document.`,
    );
    const text = decodeText(res.body);
    const name = path.posix.basename(new URL(res.url).pathname) || new URL(res.url).host;
    const api = await loadOpenApi(text, name);
    const libraryId = `/openapi/${urlSlug(input.url)}`;
    return this.enqueueStaged(
      JOB_KINDS.openapi,
      libraryId,
      input.force,
      text,
      (stagedDir, stagedFile): OpenApiPayload => ({
        libraryId,
        title: api.title,
        description: firstParagraph(api.description),
        sourceUrl: res.url,
        stagedFile,
        stagedDir,
        teamspaceId: principal.teamspaceId,
        visibility: principal.visibility,
      }),
      principal,
      `OpenAPI specification "${api.title}" (${api.operations} operations) queued for indexing as ${libraryId}.`,
    );
  }

  async submitOpenApiUpload(
    input: { fileName: string; data: Buffer; title?: string; description?: string; force: boolean },
    principal: Submitter,
  ): Promise<SubmissionResult> {
    const text = decodeText(input.data);
    const api = await loadOpenApi(text, input.fileName || 'openapiFile');
    const title = input.title?.trim() || api.title;
    const libraryId = `/openapi/${titleSlug(title)}`;
    return this.enqueueStaged(
      JOB_KINDS.openapi,
      libraryId,
      input.force,
      text,
      (stagedDir, stagedFile): OpenApiPayload => ({
        libraryId,
        title,
        description: input.description?.trim() || firstParagraph(api.description),
        sourceUrl: `upload://openapi/${titleSlug(title)}/${safeName(input.fileName || 'openapi')}`,
        stagedFile,
        stagedDir,
        teamspaceId: principal.teamspaceId,
        visibility: principal.visibility,
      }),
      principal,
      `OpenAPI specification "${title}" (${api.operations} operations) queued for indexing as ${libraryId}.`,
    );
  }

  // ---------------------------------------------------------------- llms.txt

  async submitLlmsTxt(input: { url: string; force: boolean }, principal: Submitter): Promise<SubmissionResult> {
    const res = await this.fetchOk(
      input.url,
      { maxBytes: LIMITS.llmsTxtBytes, accept: 'text/markdown, text/plain, */*' },
      (status) => `Fetching ${input.url} answered HTTP ${status}; expected an llms.txt file.`,
    );
    const text = decodeText(res.body);
    if (!text.trim()) throw new ApiError('validation_error', `${input.url} is empty.`);
    if (/^\s*<(!doctype html|html[\s>])/i.test(text))
      throw new ApiError('validation_error', `${input.url} is an HTML page, not an llms.txt file (markdown text was expected).`);
    if (text.includes('\u0000')) throw new ApiError('validation_error', `${input.url} is binary data, not an llms.txt file.`);
    const doc = parseLlmsTxt(text, res.url);
    if (!doc.title && doc.links.length === 0 && !/^#{1,6}\s/m.test(doc.text)) {
      throw new ApiError(
        'validation_error',
        `${input.url} does not look like an llms.txt file: no "# Title" heading, no sections and no "- [title](url)" links.`,
      );
    }
    const libraryId = `/llmstxt/${urlSlug(input.url)}`;
    const title = doc.title || new URL(res.url).host;
    const kind = llmsKindOf(res.url);
    const follow = kind === 'full' ? 0 : Math.min(doc.links.length, LIMITS.llmsMaxLinks);
    return this.enqueueStaged(
      JOB_KINDS.llmstxt,
      libraryId,
      input.force,
      doc.text,
      (stagedDir, stagedFile): LlmsPayload => ({
        libraryId,
        title,
        description: doc.summary,
        url: res.url,
        stagedFile,
        stagedDir,
        teamspaceId: principal.teamspaceId,
        visibility: principal.visibility,
      }),
      principal,
      `${kind === 'full' ? 'llms-full.txt' : kind === 'small' ? 'llms-small.txt' : 'llms.txt'} "${title}" queued for indexing as ${libraryId}${follow ? ` (${follow} linked documents to fetch)` : ''}.`,
    );
  }

  // ---------------------------------------------------------------- PDF / DOCX

  /**
   * Validates staged uploads (type by content, relative paths) and queues them as one library.
   * On error the caller removes stagedDir; on success the job owns it.
   */
  async submitFiles(
    input: {
      stagedDir: string;
      files: StagedUpload[];
      relativePaths?: string[];
      collectionName?: string;
      projectTitle?: string;
      description?: string;
      force: boolean;
    },
    principal: Submitter,
  ): Promise<SubmissionResult> {
    if (input.files.length === 0) throw new ApiError('validation_error', 'documentFiles is required: upload at least one PDF or DOCX file.');
    if (input.relativePaths && input.relativePaths.length !== input.files.length) {
      throw new ApiError(
        'validation_error',
        `relativePaths has ${input.relativePaths.length} entries for ${input.files.length} documentFiles; give one path per file, in the same order.`,
      );
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
      throw new ApiError(
        'unsupported_media_type',
        `Only PDF and DOCX documents are accepted (checked by content). Rejected: ${problems.join('; ')}. Nothing was stored.`,
      );
    }
    const title = input.projectTitle?.trim() || input.collectionName?.trim() || stripExt(path.posix.basename(names[0]!));
    const libraryId = `/files/${titleSlug(input.collectionName?.trim() || title)}`;
    await this.assertNew(libraryId, input.force, principal);
    const payload: FilesPayload = {
      libraryId,
      title,
      description: input.description?.trim() ?? '',
      stagedDir: this.nameOf(input.stagedDir),
      teamspaceId: principal.teamspaceId,
      visibility: principal.visibility,
      files: files.map((f) => ({ ...f, path: this.nameOf(f.path) })),
    };
    const staged = { files: payload.files.map((f) => f.path), dir: payload.stagedDir };
    const id = await this.queueShared(JOB_KINDS.files, payload, libraryId, principal, staged);
    return { libraryName: libraryId, message: `${files.length} document${files.length === 1 ? '' : 's'} queued for indexing as ${libraryId}.`, jobId: id };
  }

  // ---------------------------------------------------------------- shared

  /** Same input twice without force is a 409; so is a library with the same ID still being built. */
  private async assertNew(libraryId: string, force: boolean, who: Submitter): Promise<void> {
    const taken = ownerConflict(await this.deps.store.libraries.get(libraryId), who);
    if (taken) throw new ApiError('conflict', taken);
    const active = (await Promise.all(Object.values(JOB_KINDS).map((k) => this.deps.store.jobs.active(k, libraryId)))).flat();
    if (active.length) throw beingIndexed(libraryId, active[0]!.id);
    if (force) return;
    if (await this.deps.store.libraries.currentVersion(libraryId, '')) {
      throw new ApiError('conflict', `Library ${libraryId} already exists. Send force=true to index it again and replace it.`);
    }
  }

  /** Queues the job unless one for the library is queued or running (checked as it is queued: another request may have queued one since assertNew). */
  private async queueIdle<P>(kind: string, payload: P, libraryId: string, principal: Submitter): Promise<number> {
    const queued = await this.deps.jobs.enqueueUnless(
      kind,
      payload,
      { libraryId, memberId: principal.memberId, teamspaceId: principal.teamspaceId },
      { kinds: Object.values(JOB_KINDS) },
    );
    if (!queued.created) throw beingIndexed(libraryId, queued.id);
    return queued.id;
  }

  /** Shares the staged files, then queues (another node may claim the job at once); on failure the shared copies go. */
  private async queueShared<P>(kind: string, payload: P, libraryId: string, principal: Submitter, staged: { files: string[]; dir: string }): Promise<number> {
    const { files, dir } = staged;
    try {
      await this.deps.staged.share(files);
      return await this.queueIdle(kind, payload, libraryId, principal);
    } catch (err) {
      await this.deps.staged.forget([dir]).catch((e: unknown) => this.deps.log.warn({ err: e }, 'shared staged input not removed; the sweep will'));
      throw err;
    }
  }

  private async enqueueStaged<P>(
    kind: string,
    libraryId: string,
    force: boolean,
    text: string,
    payload: (stagedDir: string, stagedFile: string) => P,
    principal: Submitter,
    message: string,
  ): Promise<SubmissionResult> {
    await this.assertNew(libraryId, force, principal);
    const dir = this.newStagingDir();
    try {
      const file = path.join(dir, 'input.txt');
      fs.writeFileSync(file, text);
      const staged = { files: [this.nameOf(file)], dir: this.nameOf(dir) };
      const id = await this.queueShared(kind, payload(staged.dir, staged.files[0]!), libraryId, principal, staged);
      return { libraryName: libraryId, message, jobId: id };
    } catch (err) {
      this.removeStaging(dir);
      throw err;
    }
  }

  /**
   * Removes staged folders (on this node's disk, and their shared copies) no queued or running job
   * refers to (left by a job cancelled before it started, or by a crash during a request), once they
   * are older than maxAgeMs.
   */
  async sweepStaging(maxAgeMs = 60 * 60_000): Promise<number> {
    const referenced = new Set<string>();
    for (const state of ['queued', 'running'] as const) {
      for (const kind of Object.values(JOB_KINDS)) {
        for (const job of await this.deps.store.jobs.list({ state, kind, limit: 100_000 })) {
          const dir = (job.payload as { stagedDir?: unknown }).stagedDir;
          if (typeof dir === 'string') referenced.add(path.resolve(this.deps.config.dataDir, dir));
        }
      }
    }
    const root = this.nameOf(this.stagingRoot);
    // A shared file is kept while the folder it is in (staging/sources/req-…) belongs to a job.
    const folderOf = (name: string) => path.resolve(this.deps.config.dataDir, path.posix.join(root, name.slice(root.length + 1).split('/')[0]!));
    let removed = await this.deps.staged.sweep(`${root}/`, (name) => referenced.has(folderOf(name)), maxAgeMs);
    if (!fs.existsSync(this.stagingRoot)) return removed;
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

  /**
   * Background task: sweeps abandoned staged input hourly (register sweeps at start). A cluster's
   * nodes run for weeks, and a job cancelled while queued leaves its input in the database until then.
   */
  sweepTask(): () => void {
    const timer = setInterval(
      () => void this.sweepStaging().catch((err: unknown) => this.deps.log.warn({ err }, 'sweeping staged source inputs failed')),
      3600_000,
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Registers the three job kinds (and sweeps abandoned staged input at startup). */
  async register(jobs: JobQueue): Promise<void> {
    await this.sweepStaging();
    registerIndexers(jobs, {
      store: this.deps.store,
      writer: this.deps.writer,
      staged: this.deps.staged,
      removeStaging: (dir) => this.removeStaging(dir),
      fetchLinkedDocument: (url, signal) => this.fetchLinkedDocument(url, signal),
    });
  }

  /** A document an llms.txt links to, as markdown (HTML pages are reduced to their main content). */
  private async fetchLinkedDocument(url: string, signal: AbortSignal): Promise<string> {
    const res = await this.fetchOk(
      url,
      { maxBytes: LIMITS.llmsLinkBytes, accept: 'text/markdown, text/plain;q=0.9, text/html;q=0.5', signal },
      (status) => `HTTP ${status}`,
    );
    const type = (res.headers.get('content-type') ?? '').toLowerCase();
    if (/^(application\/pdf|image\/|audio\/|video\/|application\/(zip|octet-stream))/.test(type))
      throw new ApiError('unsupported_media_type', `unsupported content type ${type}`);
    const text = decodeText(res.body);
    if (/html/.test(type) || /^\s*<(!doctype html|html[\s>])/i.test(text)) return htmlToMarkdown(mainHtml(text), { baseUrl: res.url });
    return text;
  }
}

/** The main content of an HTML page when it marks one (main/article), else the body. */
function mainHtml(html: string): string {
  const m = /<main[\s>][\s\S]*?<\/main>/i.exec(html) ?? /<article[\s>][\s\S]*?<\/article>/i.exec(html) ?? /<body[\s>][\s\S]*<\/body>/i.exec(html);
  return m ? m[0] : html;
}
