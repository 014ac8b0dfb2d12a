import type { Job } from '../../lib/model.ts';

/** Public shape of a job, as GET /api/jobs/:id and `stacks jobs` show it (payload omitted: it may hold file paths). */
export function jobView(job: Job, position: number | null) {
  return {
    id: job.id, kind: job.kind, state: job.state, libraryId: job.libraryId, position, progress: job.progress, error: job.error,
    attempts: job.attempts, createdAt: job.createdAt, startedAt: job.startedAt, finishedAt: job.finishedAt, updatedAt: job.updatedAt,
  };
}

export type JobView = ReturnType<typeof jobView>;

