import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface LibrariesRouteDeps {
  operations: Pick<Operations, 'libraries' | 'libraryGet' | 'libraryUpdate'>;
}

/**
 * GET /api/libraries: every library the caller may see, in the shape of /api/v2/libs/search results.
 * GET and PATCH /api/libraries/owner/repo (or the ID URL-encoded as one segment): one library and who may read it.
 */
export function mountLibraries(app: Express, s: LibrariesRouteDeps): void {
  app.get(
    '/api/libraries',
    route(async (req, res) => {
      res.json(await s.operations.libraries(req.query, callerOf(res)));
    }),
  );
  const idOf = (params: Record<string, string | string[] | undefined>) => (params.repo ? `/${String(params.owner)}/${String(params.repo)}` : String(params.id ?? ''));
  for (const path of ['/api/libraries/:owner/:repo', '/api/libraries/:id']) {
    app.get(path, route(async (req, res) => res.json(await s.operations.libraryGet({ libraryId: idOf(req.params) }, callerOf(res)))));
    app.patch(path, route(async (req, res) => res.json(await s.operations.libraryUpdate({ ...(req.body ?? {}), libraryId: idOf(req.params) }, callerOf(res)))));
  }
}
