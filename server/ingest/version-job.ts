import type { Stores } from '../store/stores.ts';
import type { JobContext } from '../jobs/queue.ts';
import { JobCancelled } from '../jobs/queue.ts';
import type { LibraryMeta, SnippetInput } from '../../lib/model.ts';
import type { LibraryWriter, StoredCopy, VersionBuild } from './writer.ts';

/**
 * The one frame every job that builds a library version runs in (import, crawl, OpenAPI,
 * llms.txt, files): begin the build, let the source add its snippets in batches with a cancel
 * check between them, report progress, and swap the version in atomically at the end. What was
 * served before stays served until then: a failure or a cancel throws the build away; a shutdown
 * keeps it (and the staged input) for the rerun after restart, which resumes the build or starts
 * it over.
 */

/** Snippets stored per writer call (one transaction each); the cancel check runs between batches. */
export const BUILD_BATCH = 2000;
/** Progress is written to the job row at most this often unless forced. */
const PROGRESS_EVERY_MS = 250;

export interface VersionJobDeps {
  writer: Pick<LibraryWriter, 'begin'>;
  store: Pick<Stores, 'libraries'>;
}

/** What a source's content step sees of the build. */
export interface VersionSink {
  /** Stores snippets (batched, exact duplicates skipped); returns how many were new. Dynamic ones go to the source partition (VersionJob.dynamicIndex). */
  add(snippets: SnippetInput[]): Promise<number>;
  /** Stores snippets of the library's previous build as they are (no parsing, no embedding); routed like add(). */
  addStored(copies: StoredCopy[]): Promise<number>;
  /** Snippets in the build so far (a resumed build counts what the interrupted run stored). */
  readonly stored: number;
  /** Throws when the job was cancelled (here or from another process) or the server is shutting down. */
  checkCancelled(): void;
  /** Records progress on the job row, at most every 250 ms unless `force`. */
  report(progress: Record<string, unknown>, force?: boolean): void;
}

export interface VersionJob {
  meta: LibraryMeta;
  /** Version tag; '' is the library's current documentation. */
  tag?: string;
  /** After a restart, continue this job's unfinished build (crawls); otherwise the rerun starts it over. */
  resume?: boolean;
  /** Adds the source's content. */
  produce(sink: VersionSink): Promise<void>;
  /**
   * Build a second partition beside the version: the repository's dynamic source-code index.
   * Snippets marked isDynamic go there; both are swapped in by one transaction (docs/git.md).
   */
  dynamicIndex?: boolean;
  /** The error when nothing at all was stored (the served version stays); without it an empty version is committed. */
  nothingIndexed?(): Error | Promise<Error>;
  /** Metadata known only at the end (a crawled site's name), written with the swap. */
  finalMeta?(): LibraryMeta;
  /** Runs right after the swap: state a source keeps beside the version. */
  afterCommit?(totals: BuildTotals): Promise<void> | void;
  /** Removes the job's staged input when the job ends (done, failed, cancelled), never at a shutdown. */
  cleanup?(): Promise<void> | void;
}

export interface BuildTotals {
  snippets: number;
  tokens: number;
  /** The version swapped in. */
  versionId: number;
  /** Snippets of its source-code partition (0 without one). */
  dynamicSnippets: number;
}

/** True when the job stops because the server is shutting down (not cancelled, not failed). */
export function isShutdown(signal: AbortSignal, err: unknown): boolean {
  return signal.aborted && !(signal.reason instanceof JobCancelled) && !(err instanceof JobCancelled);
}

export async function runVersionJob<P>(deps: VersionJobDeps, ctx: JobContext<P>, job: VersionJob): Promise<BuildTotals> {
  const { store, writer } = deps;
  const jobId = ctx.job.id;
  const libraryId = job.meta.id;
  const servedBefore = (await store.libraries.get(libraryId)) !== null && (await store.libraries.versions(libraryId)).some((v) => v.state !== 'building');
  let last: Record<string, unknown> = {};
  let lastWritten = 0;
  const report = (progress: Record<string, unknown>, force = false) => {
    last = progress;
    if (!force && Date.now() - lastWritten < PROGRESS_EVERY_MS) return;
    lastWritten = Date.now();
    ctx.progress(progress);
  };
  const checkCancelled = ctx.checkCancelled;

  let build: VersionBuild | null = null;
  let partition: VersionBuild | null = null;
  let ended = false;
  try {
    checkCancelled();
    build = await writer.begin(job.meta, { tag: job.tag ?? '', jobId, resume: job.resume ?? false });
    if (job.dynamicIndex) partition = await writer.begin(job.meta, { tag: job.tag ?? '', jobId, resume: job.resume ?? false, kind: 'source' });
    const current = build;
    const target = (dynamic: boolean) => (dynamic && partition ? partition : current);
    const sink: VersionSink = {
      async add(snippets) {
        let stored = 0;
        for (let i = 0; i < snippets.length; i += BUILD_BATCH) {
          checkCancelled();
          const batch = snippets.slice(i, i + BUILD_BATCH);
          const dynamic = batch.filter((x) => x.kind === 'code' && x.isDynamic);
          stored += await current.add(dynamic.length ? batch.filter((x) => !(x.kind === 'code' && x.isDynamic)) : batch);
          if (dynamic.length) stored += await target(true).add(dynamic);
        }
        return stored;
      },
      async addStored(copies) {
        checkCancelled();
        return (
          (await current.addStored(copies.filter((c) => !c.snippet.isDynamic))) + (await target(true).addStored(copies.filter((c) => c.snippet.isDynamic)))
        );
      },
      get stored() {
        return current.snippetCount + (partition?.snippetCount ?? 0);
      },
      checkCancelled,
      report,
    };
    await job.produce(sink);
    checkCancelled();
    if (build.snippetCount === 0 && job.nothingIndexed) throw await job.nothingIndexed();
    const dynamicSnippets = partition?.snippetCount ?? 0;
    const committed = await build.commit(job.finalMeta?.(), partition && dynamicSnippets > 0 ? partition : null);
    if (partition && dynamicSnippets === 0) await partition.abort();
    const totals: BuildTotals = { ...committed, versionId: build.versionId, dynamicSnippets };
    ended = true;
    await job.afterCommit?.(totals);
    ctx.progress({ snippets: totals.snippets, ...last, phase: 'done', stored: totals.snippets, tokens: totals.tokens });
    return totals;
  } catch (err) {
    if (!isShutdown(ctx.signal, err)) {
      ended = true;
      await build?.abort();
      await partition?.abort();
      // A library created for this build and left without any version goes too (unless another build began one meanwhile).
      if (!servedBefore) await store.libraries.deleteIfUnversioned(libraryId);
      try {
        if (Object.keys(last).length) ctx.progress(last);
      } catch {
        /* the store may be closing */
      }
    }
    throw err;
  } finally {
    if (ended) await job.cleanup?.();
  }
}
