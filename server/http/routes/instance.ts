import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface InstanceRouteDeps {
  operations: Pick<Operations, 'settingsGet' | 'settingsUpdate' | 'gettingStarted'>;
}

/** The instance's settings (`/api/settings`: its public address) and the first-run checklist (`/api/getting-started`). */
export function mountInstance(app: Express, s: InstanceRouteDeps): void {
  app.get(
    '/api/settings',
    route(async (req, res) => res.json(await s.operations.settingsGet(req.query, callerOf(res)))),
  );
  app.patch(
    '/api/settings',
    route(async (req, res) => res.json(await s.operations.settingsUpdate(req.body ?? {}, callerOf(res)))),
  );
  app.get(
    '/api/getting-started',
    route(async (req, res) => res.json(await s.operations.gettingStarted(req.query, callerOf(res)))),
  );
}
