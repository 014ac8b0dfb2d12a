import type { Express } from 'express';
import { z } from 'zod';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Job } from '../../../lib/model.ts';
import { route } from '../handler.ts';
import { requireKey } from '../auth.ts';
import { validate } from '../../../lib/validate.ts';

/** Public shape of a job (payload omitted: it may hold file paths). */
export function jobView(job: Job, position: number | null) {
  return {
    id: job.id, kind: job.kind, state: job.state, libraryId: job.libraryId, position, progress: job.progress, error: job.error,
    attempts: job.attempts, createdAt: job.createdAt, startedAt: job.startedAt, finishedAt: job.finishedAt, updatedAt: job.updatedAt,
  };
}

const listQuery = z.object({
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']).optional(),
  kind: z.string().min(1).max(40).optional(),
  libraryId: z.string().min(1).max(500).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
const idParam = z.object({ id: z.coerce.number().int().positive() });

export interface JobRouteDeps {
  jobs: Pick<JobQueue, 'list' | 'get' | 'cancel'>;
  /** The queue position of a queued job (server/store/jobs.ts). */
  store: { jobs: { position(id: number): number | null } };
}

/** Job list, detail and cancel (durable background work: imports, crawls, sources). */
export function mountJobs(app: Express, s: JobRouteDeps): void {
  app.get(
    '/api/jobs',
    requireKey(),
    route((req, res) => {
      const q = validate(listQuery, req.query);
      res.json({ jobs: s.jobs.list(q).map((j) => jobView(j, s.store.jobs.position(j.id))) });
    }),
  );
  app.get(
    '/api/jobs/:id',
    requireKey(),
    route((req, res) => {
      const { id } = validate(idParam, req.params);
      res.json(jobView(s.jobs.get(id), s.store.jobs.position(id)));
    }),
  );
  app.post(
    '/api/jobs/:id/cancel',
    requireKey(['owner', 'admin']),
    route((req, res) => {
      const { id } = validate(idParam, req.params);
      res.json(jobView(s.jobs.cancel(id), null));
    }),
  );
}
