import type { JobContext, JobQueue } from '../jobs/queue.ts';
import type { Library } from '../../lib/model.ts';

/**
 * Background indexing of a library version that a search asked for but the appliance does not
 * hold (behaviour rule 8). The job records the request so an admin sees it in the job list; the
 * fetcher (the git source, wired in server/services.ts) indexes the matching tag of a library
 * added from a Git repository, and fails with a message saying what to do for any other library.
 */
export const VERSION_FETCH_KIND = 'version-fetch';

export interface VersionFetchPayload {
  libraryId: string;
  version: string;
  repoUrl: string | null;
}

/** A failed request for the same version is not queued again for this long (avoids one job per search). */
export const VERSION_FETCH_RETRY_MS = 24 * 3600_000;

function same(a: string, b: string): boolean {
  const n = (s: string) => s.trim().replace(/^[vV]/, '').replace(/_/g, '.').toLowerCase();
  return n(a) === n(b);
}

/**
 * Queues a version-fetch job unless one for the same library and version is queued, running,
 * succeeded or failed within VERSION_FETCH_RETRY_MS. Returns the job id and whether it is new.
 */
export function queueVersionFetch(jobs: JobQueue, library: Library, version: string, memberId: number | null, now = Date.now()): { id: number; created: boolean } {
  for (const job of jobs.list({ kind: VERSION_FETCH_KIND, libraryId: library.id, limit: 200 })) {
    const p = job.payload as Partial<VersionFetchPayload>;
    if (typeof p.version !== 'string' || !same(p.version, version)) continue;
    if (job.state === 'queued' || job.state === 'running') return { id: job.id, created: false };
    const finished = job.finishedAt ? Date.parse(job.finishedAt) : 0;
    if ((job.state === 'failed' || job.state === 'succeeded') && now - finished < VERSION_FETCH_RETRY_MS) return { id: job.id, created: false };
  }
  const payload: VersionFetchPayload = { libraryId: library.id, version, repoUrl: library.docsRepoUrl ?? library.sourceUrl ?? null };
  const { id } = jobs.enqueue(VERSION_FETCH_KIND, payload, { libraryId: library.id, memberId });
  return { id, created: true };
}

/** Indexes `version` of a library; returns the tag it indexed. Throws (the job fails) when it cannot. */
export type VersionFetcher = (ctx: JobContext<VersionFetchPayload>, libraryId: string, version: string) => Promise<string>;

/** The handler: the fetcher indexes the version, or says why it cannot. */
export function registerVersionFetch(jobs: Pick<JobQueue, 'register'>, fetcher: VersionFetcher): void {
  jobs.register<VersionFetchPayload>(VERSION_FETCH_KIND, async (ctx) => {
    const { libraryId, version } = ctx.job.payload;
    ctx.log.info({ libraryId, version }, 'version fetch requested');
    const tag = await fetcher(ctx, libraryId, version);
    ctx.log.info({ libraryId, version, tag }, 'version fetched');
  });
}
