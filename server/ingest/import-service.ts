import { ownerConflict, type Submitter } from '../../lib/owner.ts';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Stores } from '../store/stores.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { ApiError } from '../../lib/errors.ts';
import type { BundleHeader } from './bundle.ts';
import { parseLibraryId, type LibraryVisibility } from '../../lib/model.ts';
import { discardStaged, stageBundle, type StagedBundle, type StagedLibrary } from './import-parse.ts';
import type { QueueDecision, QueueView } from '../store/jobs.ts';
import { isZipFile, stageZip } from './import-zip.ts';
import { stagedName, type StagedFiles } from './staged-files.ts';

export const IMPORT_JOB = 'import';

/** What an import job needs; the snippets themselves wait in the staged file. */
export interface ImportJobPayload {
  /** Staged NDJSON file, relative to the data dir. */
  file: string;
  project: string;
  libraryId: string;
  /** '' for the library's current documentation, else the version tag. */
  tag: string;
  force: boolean;
  header: BundleHeader;
  /** Snippet lines in the staged file (progress total and an integrity check). */
  snippets: number;
  /** Owner and visibility of a new library (absent in older jobs: the store's default); an existing one keeps its own. */
  teamspaceId?: number | null;
  visibility?: LibraryVisibility;
}

export interface ImportOptions {
  /** Overwrite existing libraries; null/undefined falls back to the bundle's own `force` field. */
  force?: boolean | null;
  /** Who imports: the member, and the teamspace and visibility new libraries get. Absent: no owner (instance-wide). */
  who?: Submitter;
  /** A reason to skip a library (e.g. its source type is disabled by the teamspace policy), or null to import it. */
  refuse?: (header: BundleHeader) => string | null;
}

export interface ImportResult {
  message: string;
  /** Library IDs (with the version tag when one was imported) whose import was queued. */
  queued: string[];
  skipped: { project: string; reason: string }[];
  /** One entry per queued library: the job that indexes it. */
  jobs: { project: string; libraryId: string; tag: string; jobId: number; position: number | null; snippets: number }[];
}

/**
 * Bundle import: uploads are saved to a temp file, stream-parsed and validated library by library
 * into staged files, shared with the other nodes (`staged`: on PostgreSQL any node may run the job),
 * then one durable 'import' job per accepted library is queued in a single transaction. A bundle with
 * any invalid library queues nothing.
 */
export class ImportService {
  constructor(
    private readonly config: Config,
    private readonly store: Stores,
    private readonly jobs: JobQueue,
    private readonly log: Logger,
    private readonly staged: StagedFiles,
  ) {}

  get uploadsDir(): string {
    return path.join(this.config.dataDir, 'uploads');
  }

  get stagedDir(): string {
    return path.join(this.uploadsDir, 'staged');
  }

  /** A fresh temp file name under the uploads folder. */
  tempUploadPath(suffix = '.upload'): string {
    fs.mkdirSync(this.uploadsDir, { recursive: true });
    return path.join(this.uploadsDir, `${Date.now().toString(36)}-${crypto.randomBytes(6).toString('hex')}${suffix}`);
  }

  /** Streams a request body to a temp file, failing with payload_too_large past maxBytes. Returns the file path. */
  async saveUpload(body: Readable, maxBytes = this.config.importMaxBytes): Promise<string> {
    const file = this.tempUploadPath();
    // Opened synchronously so that an early failure can unlink it without racing a pending open.
    const out = fs.createWriteStream(file, { fd: fs.openSync(file, 'w') });
    let writeError: Error | null = null;
    out.on('error', (err) => (writeError ??= err));
    let size = 0;
    try {
      for await (const chunk of body) {
        size += (chunk as Buffer).length;
        // Past the limit the rest is read and dropped (so the client gets the 413 instead of a reset),
        // up to a cap after which the connection is cut.
        if (size > maxBytes) {
          if (size > maxBytes * 2 + (16 << 20)) break;
          continue;
        }
        if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
      }
      if (writeError) throw writeError;
      if (size > maxBytes)
        throw new ApiError('payload_too_large', `The upload is larger than the import limit of ${maxBytes} bytes (STACKS_IMPORT_MAX_BYTES).`);
      await new Promise<void>((resolve, reject) => {
        out.once('error', reject);
        out.end(() => resolve());
      });
      if (writeError) throw writeError;
      return file;
    } catch (err) {
      out.destroy();
      fs.rmSync(file, { force: true });
      throw err;
    }
  }

  /** Parses and validates a bundle file (JSON or zip of JSON bundles) into staged files. */
  async stage(file: string): Promise<StagedBundle> {
    if (fs.statSync(file).size === 0) throw new ApiError('validation_error', 'The bundle is empty.');
    if (isZipFile(file)) return stageZip(file, this.stagedDir, this.config.importMaxBytes * 10);
    return stageBundle(fs.createReadStream(file, { highWaterMark: 1 << 20 }), this.stagedDir);
  }

  /** Stages a bundle file and queues its libraries. The file itself is left in place. */
  async importFile(file: string, options: ImportOptions = {}): Promise<ImportResult> {
    const staged = await this.stage(file);
    return this.queue(staged, options);
  }

  /**
   * Decides per library (skip or queue) and queues the jobs in one store transaction
   * (JobQueue.enqueueEach), so that two uploads of the same library cannot both pass the
   * "already exists" check.
   */
  async queue(staged: StagedBundle, options: ImportOptions = {}): Promise<ImportResult> {
    const force = options.force ?? staged.force ?? false;
    const result: ImportResult = { message: '', queued: [], skipped: [], jobs: [] };
    const unused = new Set(staged.libraries);
    const seen = new Map<string, string>();
    // The ID as the caller wrote it (with its own tag), or the ID plus the bundle's `version`.
    const shownOf = (lib: StagedLibrary) => {
      const ownTag = parseLibraryId(lib.project)?.tag;
      return ownTag ? lib.project.trim().replace(/\/$/, '') : lib.tag ? `${lib.libraryId}/${lib.tag}` : lib.libraryId;
    };
    const nameOf = (lib: StagedLibrary) => stagedName(this.config.dataDir, lib.file);
    const decide = (lib: StagedLibrary, view: QueueView): QueueDecision => {
      const key = `${lib.libraryId}\u0000${lib.tag}`;
      const what = lib.tag ? `${lib.libraryId} version ${lib.tag}` : lib.libraryId;
      const first = seen.get(key);
      if (first) return { skip: `${lib.label}: duplicate of ${first} in the same upload (${what}); only the first is imported` };
      seen.set(key, lib.label);
      const refused = (options.who ? ownerConflict(view.library, options.who) : null) ?? options.refuse?.(lib.header) ?? null;
      if (refused) return { skip: refused };
      if (!force) {
        if (view.served) return { skip: `${what} already exists; import with force=true to replace it` };
        if (view.pending.some((j) => (j.payload as Partial<ImportJobPayload>).tag === lib.tag))
          return { skip: `an import of ${what} is already queued or running; import with force=true to queue another` };
      }
      const payload: ImportJobPayload = {
        file: nameOf(lib),
        project: lib.project,
        libraryId: lib.libraryId,
        tag: lib.tag,
        force,
        header: lib.header,
        snippets: lib.snippets,
        ...(options.who ? { teamspaceId: options.who.teamspaceId, visibility: options.who.visibility } : {}),
      };
      return { kind: IMPORT_JOB, payload, libraryId: lib.libraryId, memberId: options.who?.memberId ?? null, teamspaceId: options.who?.teamspaceId ?? null };
    };
    try {
      // Shared before any job exists: another node may claim it the moment it is queued. Libraries
      // the decision then skips are shared for nothing and forgotten below.
      await this.staged.share(staged.libraries.map(nameOf));
      const outcomes = await this.jobs.enqueueEach(staged.libraries, (lib) => ({ kind: IMPORT_JOB, libraryId: lib.libraryId, tag: lib.tag }), decide);
      staged.libraries.forEach((lib, i) => {
        const o = outcomes[i]!;
        const shown = shownOf(lib);
        if ('skip' in o) {
          result.skipped.push({ project: shown, reason: o.skip });
          return;
        }
        unused.delete(lib);
        result.queued.push(shown);
        result.jobs.push({ project: shown, libraryId: lib.libraryId, tag: lib.tag, jobId: o.id, position: o.position, snippets: lib.snippets });
      });
    } catch (err) {
      discardStaged(staged.libraries);
      await this.forgetOrLeave(staged.libraries.map(nameOf));
      throw err;
    }
    discardStaged([...unused]);
    await this.forgetOrLeave([...unused].map(nameOf));
    const n = result.queued.length;
    result.message =
      n === 0
        ? `Nothing to import: ${result.skipped.length} ${plural(result.skipped.length, 'library', 'libraries')} skipped.`
        : `${n} ${plural(n, 'library', 'libraries')} queued for import${result.skipped.length ? `, ${result.skipped.length} skipped` : ''}.`;
    this.log.info({ queued: result.queued, skipped: result.skipped.length }, 'import queued');
    return result;
  }

  /**
   * Removes abandoned files: uploads older than maxUploadAgeMs (a crashed request), and staged
   * files (on this node's disk, and their shared copies) that no queued or running import job refers
   * to (a job cancelled while queued, a crash between staging and queueing). Young staged files are
   * kept: a request may be about to queue them.
   */
  async sweep(now = Date.now(), maxUploadAgeMs = 6 * 3600_000, maxStagedAgeMs = 3600_000): Promise<number> {
    let removed = 0;
    const old = (file: string, age: number) => {
      try {
        return now - fs.statSync(file).mtimeMs > age;
      } catch {
        return false;
      }
    };
    if (fs.existsSync(this.uploadsDir)) {
      for (const name of fs.readdirSync(this.uploadsDir)) {
        const file = path.join(this.uploadsDir, name);
        if (/\.(upload|part)$/.test(name) && old(file, maxUploadAgeMs)) {
          fs.rmSync(file, { force: true });
          removed++;
        }
      }
    }
    const active = new Set<string>();
    for (const state of ['queued', 'running'] as const) {
      for (const j of await this.store.jobs.list({ kind: IMPORT_JOB, state, limit: 1_000_000 }))
        active.add(path.resolve(this.config.dataDir, String((j.payload as Partial<ImportJobPayload>).file)));
    }
    const stagedPrefix = `${stagedName(this.config.dataDir, this.stagedDir)}/`;
    removed += await this.staged.sweep(stagedPrefix, (name) => active.has(path.resolve(this.config.dataDir, name)), maxStagedAgeMs, now);
    if (fs.existsSync(this.stagedDir)) {
      for (const name of fs.readdirSync(this.stagedDir)) {
        const file = path.join(this.stagedDir, name);
        if (!active.has(file) && old(file, maxStagedAgeMs)) {
          fs.rmSync(file, { force: true });
          removed++;
        }
      }
    }
    if (removed > 0) this.log.info({ removed }, 'removed abandoned import files');
    return removed;
  }

  /** Forgets shared copies no job will read; one the database refuses now is left to the sweep rather than failing the request. */
  private async forgetOrLeave(names: string[]): Promise<void> {
    await this.staged.forget(names).catch((err: unknown) => this.log.warn({ err, files: names.length }, 'shared staged files not removed; the sweep will'));
  }

  /** A job's staged file on this node (fetched from the shared copy when another node staged it), or null when it is gone. */
  obtainStaged(payload: ImportJobPayload): Promise<string | null> {
    return this.staged.obtain(payload.file);
  }

  /** Forgets a job's shared staged file (its job ended); this node's copy is the job's to remove. */
  forgetStaged(payload: ImportJobPayload): Promise<void> {
    return this.staged.forget([payload.file]);
  }
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}
