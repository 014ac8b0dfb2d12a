import type { Express } from 'express';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';
import type { Operations } from '../../operations/index.ts';

export interface HealthDeps {
  operations: Pick<Operations, 'health' | 'ready'>;
}

/**
 * Monitoring endpoints, without a key (like /ping): /api/health describes the instance,
 * /api/ready answers 200 only while the database answers (for load balancers and orchestrators).
 */
export function mountHealth(app: Express, s: HealthDeps): void {
  app.get(
    '/api/health',
    route(async (req, res) => res.json(await s.operations.health(req.query, callerOf(res)))),
  );
  app.get(
    '/api/ready',
    route(async (req, res) => res.json(await s.operations.ready(req.query, callerOf(res)))),
  );
}
