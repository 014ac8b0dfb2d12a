import type { JobQueue } from '../jobs/queue.ts';
import { jobView } from '../jobs/view.ts';
import { jobCancelOperation, jobGetOperation, jobsListOperation } from '../contracts/jobs.ts';
import type { binder } from './bind.ts';

export interface JobOperationDeps {
  jobs: Pick<JobQueue, 'list' | 'get' | 'cancel'>;
  /** Place in the queue of a queued job (null otherwise). */
  position(id: number): number | null;
}

/** Durable background jobs: list, detail, cancel. */
export function jobOperations(bind: ReturnType<typeof binder>, d: JobOperationDeps) {
  return {
    jobsList: bind(jobsListOperation, (i) => ({ jobs: d.jobs.list(i).map((j) => jobView(j, d.position(j.id))) })),
    jobGet: bind(jobGetOperation, (i) => jobView(d.jobs.get(i.id), d.position(i.id))),
    jobCancel: bind(jobCancelOperation, (i) => jobView(d.jobs.cancel(i.id), null)),
  };
}
