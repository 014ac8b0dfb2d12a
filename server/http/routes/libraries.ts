import type { Express } from 'express';
import type { Config } from '../../config.ts';
import type { AccessPolicy, LibrarySearchService } from '../../search/contracts.ts';
import { route } from '../handler.ts';
import { searchPrincipal } from '../auth.ts';

export interface LibrariesRouteDeps {
  librarySearch: LibrarySearchService;
  access: AccessPolicy;
  config: Pick<Config, 'allowAnonymousSearch'>;
}

/** GET /api/libraries: every library the caller may see, in the shape of /api/v2/libs/search results. */
export function mountLibraries(app: Express, s: LibrariesRouteDeps): void {
  app.get(
    '/api/libraries',
    route((_req, res) => {
      const principal = searchPrincipal(res, s.config);
      res.json({ libraries: s.librarySearch.list(principal), searchFilterApplied: s.access.filtersActive(principal) });
    }),
  );
}
