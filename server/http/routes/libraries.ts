import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { callerOf } from '../auth.ts';

/** GET /api/libraries: every library the caller may see, in the shape of /api/v2/libs/search results. */
export function mountLibraries(app: Express, s: Services): void {
  app.get(
    '/api/libraries',
    route(async (req, res) => {
      res.json(await s.operations.libraries(req.query, callerOf(res)));
    }),
  );
}
