import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface LibrariesRouteDeps {
  operations: Pick<Operations, 'libraries'>;
}

/** GET /api/libraries: every library the caller may see, in the shape of /api/v2/libs/search results. */
export function mountLibraries(app: Express, s: LibrariesRouteDeps): void {
  app.get(
    '/api/libraries',
    route(async (req, res) => {
      res.json(await s.operations.libraries(req.query, callerOf(res)));
    }),
  );
}
