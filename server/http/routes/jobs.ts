import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { callerOf } from '../auth.ts';

/** Job list, detail and cancel (durable background work: imports, crawls, sources). */
export function mountJobs(app: Express, s: Services): void {
  app.get('/api/jobs', route(async (req, res) => res.json(await s.operations.jobsList(req.query, callerOf(res)))));
  app.get('/api/jobs/:id', route(async (req, res) => res.json(await s.operations.jobGet(req.params, callerOf(res)))));
  app.post('/api/jobs/:id/cancel', route(async (req, res) => res.json(await s.operations.jobCancel(req.params, callerOf(res)))));
}
