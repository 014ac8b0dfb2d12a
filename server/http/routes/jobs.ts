import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface JobRouteDeps {
  operations: Pick<Operations, 'jobsList' | 'jobGet' | 'jobCancel'>;
}

/** Job list, detail and cancel (durable background work: imports, crawls, sources). */
export function mountJobs(app: Express, s: JobRouteDeps): void {
  app.get('/api/jobs', route(async (req, res) => res.json(await s.operations.jobsList(req.query, callerOf(res)))));
  app.get('/api/jobs/:id', route(async (req, res) => res.json(await s.operations.jobGet(req.params, callerOf(res)))));
  app.post('/api/jobs/:id/cancel', route(async (req, res) => res.json(await s.operations.jobCancel(req.params, callerOf(res)))));
}
