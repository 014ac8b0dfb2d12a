import type { Job } from '../../lib/model.ts';

/**
 * Public shape of a job, as GET /api/jobs/:id and `stacks jobs` show it (payload omitted: it may
 * hold file paths; only the version a job indexes is taken from it). `retryable`: whether
 * POST /api/jobs/:id/retry may help (the operations decide, by kind and by the error's code).
 */
export function jobView(job: Job, position: number | null, retryable = false) {
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    libraryId: job.libraryId,
    version: versionOf(job),
    position,
    progress: job.progress,
    error: job.error,
    retryable,
    attempts: job.attempts,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    updatedAt: job.updatedAt,
  };
}

/** The library version a job works on when it is not the current documentation: a version fetch's request, a Git job's tag. */
function versionOf(job: Job): string | null {
  const p = job.payload as { version?: unknown; tag?: unknown };
  const v = typeof p.version === 'string' ? p.version : typeof p.tag === 'string' ? p.tag : '';
  return v || null;
}

export type JobView = ReturnType<typeof jobView>;
