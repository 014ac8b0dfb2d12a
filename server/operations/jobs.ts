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

export interface JobOperationDeps {
  jobs: Pick<JobQueue, 'list' | 'get' | 'cancel' | 'rerun'>;
  /** Place in the queue of a queued job (null otherwise). */
  position(id: number): number | null;
}

/**
 * Durable background jobs: list, detail, cancel. A key sees its own teamspace's jobs and those of
 * no teamspace (instance maintenance); another teamspace's job answers exactly like a missing one.
 * The local CLI (no principal) sees every job.
 */
export function jobOperations(bind: ReturnType<typeof binder>, d: JobOperationDeps) {
  const visible = (id: number, p: Principal | null): Job => {
    const job = d.jobs.get(id);
    if (p && job.teamspaceId !== null && job.teamspaceId !== p.teamspaceId) throw new ApiError('job_not_found', `No job with id ${id}.`);
    return job;
  };
  return {
    jobsList: bind(jobsListOperation, (i, p) => ({ jobs: d.jobs.list({ ...i, teamspaceId: p?.teamspaceId }).map((j) => jobView(j, d.position(j.id))) })),
    jobGet: bind(jobGetOperation, (i, p) => jobView(visible(i.id, p), d.position(i.id))),
    jobCancel: bind(jobCancelOperation, (i, p) => (visible(i.id, p), jobView(d.jobs.cancel(i.id), null))),
    jobRetry: bind(jobRetryOperation, (i, p) => {
      const job = visible(i.id, p);
      if (job.state !== 'failed' && job.state !== 'cancelled') throw new ApiError('conflict', `Job ${job.id} is ${job.state}; only a failed or cancelled job can be retried.`);
      // Other kinds read staged uploads that are gone once the job ended: those are added again instead.
      if (!RETRYABLE.has(job.kind)) throw new ApiError('conflict', `A ${job.kind} job cannot run again: its uploaded input is gone; add or import it again.`);
      const again = d.jobs.rerun(job.id);
      return jobView(d.jobs.get(again.id), again.position);
    }),
  };
}
