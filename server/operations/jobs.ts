import type { Job } from '../model.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { jobCancelOperation, jobGetOperation, jobsListOperation } from '../contracts/jobs.ts';
import type { binder } from './bind.ts';

export interface JobOperationDeps {
  jobs: Pick<JobQueue, 'list' | 'get' | 'cancel'>;
  /** Place in the queue of a queued job (null otherwise). */
  position(id: number): number | null;
}

/** Public shape of a job (payload omitted: it may hold file paths). */
export function jobView(job: Job, position: number | null) {
  return {
    id: job.id, kind: job.kind, state: job.state, libraryId: job.libraryId, position, progress: job.progress, error: job.error,
    attempts: job.attempts, createdAt: job.createdAt, startedAt: job.startedAt, finishedAt: job.finishedAt, updatedAt: job.updatedAt,
  };
}

export type JobView = ReturnType<typeof jobView>;

/** Durable background jobs: list, detail, cancel. */
export function jobOperations(bind: ReturnType<typeof binder>, d: JobOperationDeps) {
  return {
    jobsList: bind(jobsListOperation, (i) => ({ jobs: d.jobs.list(i).map((j) => jobView(j, d.position(j.id))) })),
    jobGet: bind(jobGetOperation, (i) => jobView(d.jobs.get(i.id), d.position(i.id))),
    jobCancel: bind(jobCancelOperation, (i) => jobView(d.jobs.cancel(i.id), null)),
  };
}
