import type { JobContext, JobQueue } from '../jobs/queue.ts';
import type { Logger } from '../log.ts';
import type { Job, Library } from '../../lib/model.ts';

/**
 * Background indexing of a library version that a search asked for but the appliance does not
 * hold (behaviour rule 8). Only a library added from a Git repository can get another version, and
 * only one its repository has a tag for: anything else would queue a job that can only fail. So a
 * request first asks the remote for its tags (`git ls-remote`, off the request path) and queues a
 * job only for a version that names one; the job then indexes that tag (the git source, wired in
 * server/services.ts). The answer itself does not wait: it serves the current documentation as
 * `unverified` either way.
 */
export const VERSION_FETCH_KIND = 'version-fetch';

export interface VersionFetchPayload {
  libraryId: string;
  version: string;
  repoUrl: string | null;
}

/** A failed request for the same version is not queued again for this long (avoids one job per search). */
export const VERSION_FETCH_RETRY_MS = 24 * 3600_000;
/** A version the remote had no tag for is not asked about again for this long (one `ls-remote` per burst of searches). */
export const NO_TAG_MEMORY_MS = 10 * 60_000;
/** Bounded memory: at most this many versions without a tag are remembered (the oldest go first). */
const NO_TAG_MAX = 1_000;

const norm = (s: string) => s.trim().replace(/^[vV]/, '').replace(/_/g, '.').toLowerCase();

/** What rule 8 needs of the Git source. */
export interface VersionTags {
  /** Whether the library was added from a Git repository (nothing else can be fetched by version). */
  isGit(libraryId: string): Promise<boolean>;
  /** The repository's tag that `version` names, or null; asks the remote. Throws when the remote cannot be asked. */
  tagFor(libraryId: string, version: string): Promise<string | null>;
}

/**
 * Queues a version-fetch job unless one for the same library and version is queued, running,
 * succeeded or failed within VERSION_FETCH_RETRY_MS. Returns the job id and whether it is new.
 */
export async function queueVersionFetch(
  jobs: JobQueue,
  library: Library,
  version: string,
  memberId: number | null,
  now = Date.now(),
): Promise<{ id: number; created: boolean }> {
  const payload: VersionFetchPayload = { libraryId: library.id, version, repoUrl: library.docsRepoUrl ?? library.sourceUrl ?? null };
  // Checked and queued in one transaction: two searches asking at once queue one job.
  const queued = await jobs.enqueueUnless(
    VERSION_FETCH_KIND,
    payload,
    { libraryId: library.id, memberId },
    { kinds: [VERSION_FETCH_KIND], states: ['queued', 'running', 'succeeded', 'failed', 'cancelled'], limit: 200, match: (job) => isRecent(job, version, now) },
  );
  return { id: queued.id, created: queued.created };
}

/** Whether a job is for this version and active or ended within VERSION_FETCH_RETRY_MS. */
function isRecent(job: Job, version: string, now: number): boolean {
  const p = job.payload as Partial<VersionFetchPayload>;
  if (typeof p.version !== 'string' || norm(p.version) !== norm(version)) return false;
  if (job.state === 'queued' || job.state === 'running') return true;
  const finished = job.finishedAt ? Date.parse(job.finishedAt) : 0;
  return (job.state === 'failed' || job.state === 'succeeded') && now - finished < VERSION_FETCH_RETRY_MS;
}

/** The id of a job for this version that is active or ended within VERSION_FETCH_RETRY_MS, else null. */
async function recentJob(jobs: Pick<JobQueue, 'list'>, libraryId: string, version: string, now: number): Promise<number | null> {
  return (await jobs.list({ kind: VERSION_FETCH_KIND, libraryId, limit: 200 })).find((job) => isRecent(job, version, now))?.id ?? null;
}

export interface VersionRequestDeps {
  jobs: JobQueue;
  tags: VersionTags;
  log: Logger;
  now?: () => number;
}

/**
 * Rule 8 for /v3/search and /v2/context: `request` returns at once; the tag lookup runs in the
 * background, one at a time per library and version, and a version without a tag is remembered
 * for NO_TAG_MEMORY_MS so repeated searches do not ask the remote each time.
 */
export class VersionRequests {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly noTag = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly d: VersionRequestDeps) {
    this.now = d.now ?? Date.now;
  }

  request(library: Library, version: string, memberId: number | null): void {
    const key = `${library.id}\n${norm(version)}`;
    if (this.inFlight.has(key) || (this.noTag.get(key) ?? 0) > this.now()) return;
    // The search answers at once; the lookup (and any failure of it) is the background's.
    const done = this.lookUp(library, version, memberId, key)
      .catch((err: unknown) => this.d.log.warn({ libraryId: library.id, version, err: (err as Error).message }, 'search: version lookup failed'))
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, done);
  }

  /** Resolves when every lookup under way has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.all(this.inFlight.values());
  }

  private async lookUp(library: Library, version: string, memberId: number | null, key: string): Promise<void> {
    const { log } = this.d;
    if (!(await this.d.tags.isGit(library.id))) return;
    if ((await recentJob(this.d.jobs, library.id, version, this.now())) !== null) return;
    let tag: string | null;
    try {
      tag = await this.d.tags.tagFor(library.id, version);
    } catch (err) {
      // The remote could not be asked (down, credentials): the job asks again and fails with the reason,
      // which an admin sees in the job list and can retry.
      log.warn({ libraryId: library.id, version, err: (err as Error).message }, 'search: could not list the tags of a repository; queuing the version anyway');
      tag = version;
    }
    if (tag === null) {
      this.rememberNoTag(key);
      log.info({ libraryId: library.id, version }, 'search: a requested version is no tag of the repository; nothing queued');
      return;
    }
    try {
      const job = await queueVersionFetch(this.d.jobs, library, version, memberId, this.now());
      if (job.created) log.info({ libraryId: library.id, version, tag, jobId: job.id }, 'search: queued indexing of a missing version');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'search: could not queue a version fetch');
    }
  }

  private rememberNoTag(key: string): void {
    this.noTag.delete(key);
    this.noTag.set(key, this.now() + NO_TAG_MEMORY_MS);
    if (this.noTag.size > NO_TAG_MAX) this.noTag.delete(this.noTag.keys().next().value!);
  }
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
