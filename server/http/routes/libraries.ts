import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { searchPrincipal } from '../auth.ts';

/** GET /api/libraries: every library the caller may see, in the shape of /api/v2/libs/search results. */
export function mountLibraries(app: Express, s: Services): void {
  app.get(
    '/api/libraries',
    route((_req, res) => {
      const principal = searchPrincipal(res, s.config);
      res.json({ libraries: s.librarySearch.list(principal), searchFilterApplied: s.access.filtersActive(principal) });
    }),
  );
}
