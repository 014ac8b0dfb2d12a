import type { Job, Principal } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { jobView } from '../jobs/view.ts';
import { jobCancelOperation, jobGetOperation, jobsListOperation } from '../contracts/jobs.ts';
import type { binder } from './bind.ts';

export interface JobOperationDeps {
  jobs: Pick<JobQueue, 'list' | 'get' | 'cancel'>;
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
  };
}
