import type { Job, Principal } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { jobView } from '../jobs/view.ts';
import { jobCancelOperation, jobGetOperation, jobRetryOperation, jobsListOperation } from '../contracts/jobs.ts';
import type { binder } from './bind.ts';
import { CRAWL_JOB } from '../sources/website/service.ts';
import { VERSION_FETCH_KIND } from '../search/version-fetch.ts';
import { GIT_JOB } from '../sources/git/job.ts';

/** Kinds whose input outlives the job (a crawl's address and options, a version to fetch). */
const RETRYABLE = new Set([CRAWL_JOB, VERSION_FETCH_KIND, GIT_JOB]);
/** Failures the same input meets again: bad input, a missing tag or page, a source that cannot be indexed that way. */
const PERMANENT = new Set(['validation_error', 'invalid_library_id', 'not_found', 'library_not_found', 'unsupported_media_type', 'payload_too_large']);

/** Why a retry of this job cannot help, or null when it may. */
function retryRefusal(job: Job): string | null {
  if (job.state !== 'failed' && job.state !== 'cancelled') return `Job ${job.id} is ${job.state}; only a failed or cancelled job can be retried.`;
  // Other kinds read staged uploads that are gone once the job ended: those are added again instead.
  if (!RETRYABLE.has(job.kind)) return `A ${job.kind} job cannot run again: its uploaded input is gone; add or import it again.`;
  if (job.state === 'failed' && job.errorCode !== null && PERMANENT.has(job.errorCode))
    return `Job ${job.id} failed for a reason a retry does not change: ${job.error ?? job.errorCode}`;
  return null;
}

const view = (job: Job, position: number | null) => jobView(job, position, retryRefusal(job) === null);

export interface JobOperationDeps {
  jobs: Pick<JobQueue, 'list' | 'get' | 'cancel' | 'rerun'>;
  /** Place in the queue of a queued job (null otherwise). */
  position(id: number): Promise<number | null>;
}

/**
 * Durable background jobs: list, detail, cancel. A key sees its own teamspace's jobs and those of
 * no teamspace (instance maintenance); another teamspace's job answers exactly like a missing one.
 * The local CLI (no principal) sees every job.
 */
export function jobOperations(bind: ReturnType<typeof binder>, d: JobOperationDeps) {
  const visible = async (id: number, p: Principal | null): Promise<Job> => {
    const job = await d.jobs.get(id);
    if (p && job.teamspaceId !== null && job.teamspaceId !== p.teamspaceId) throw new ApiError('job_not_found', `No job with id ${id}.`);
    return job;
  };
  return {
    jobsList: bind(jobsListOperation, async (i, p) => {
      const jobs = [];
      for (const j of await d.jobs.list({ ...i, teamspaceId: p?.teamspaceId })) jobs.push(view(j, await d.position(j.id)));
      return { jobs };
    }),
    jobGet: bind(jobGetOperation, async (i, p) => view(await visible(i.id, p), await d.position(i.id))),
    jobCancel: bind(jobCancelOperation, async (i, p) => {
      await visible(i.id, p);
      return view(await d.jobs.cancel(i.id), null);
    }),
    jobRetry: bind(jobRetryOperation, async (i, p) => {
      const job = await visible(i.id, p);
      const refusal = retryRefusal(job);
      if (refusal) throw new ApiError('conflict', refusal);
      const again = await d.jobs.rerun(job.id);
      return view(await d.jobs.get(again.id), again.position);
    }),
  };
}
