import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface LibrariesRouteDeps {
  operations: Pick<Operations, 'libraries' | 'libraryGet' | 'libraryUpdate' | 'librarySnippets' | 'libraryDelete' | 'libraryRefresh'>;
}

/**
 * GET /api/libraries: every library the caller may see, in the shape of /api/v2/libs/search results.
 * GET, PATCH and DELETE /api/libraries/owner/repo (or the ID URL-encoded as one segment): one library, who may
 * read it, deleting it; GET .../snippets pages its snippets, POST .../refresh indexes it again from its source.
 */
export function mountLibraries(app: Express, s: LibrariesRouteDeps): void {
  app.get(
    '/api/libraries',
    route(async (req, res) => {
      res.json(await s.operations.libraries(req.query, callerOf(res)));
    }),
  );
  const idOf = (params: Record<string, string | string[] | undefined>) =>
    params.repo ? `/${String(params.owner)}/${String(params.repo)}` : String(params.id ?? '');
  app.get(
    '/api/libraries/:owner/:repo/snippets',
    route(async (req, res) => res.json(await s.operations.librarySnippets({ ...req.query, libraryId: idOf(req.params) }, callerOf(res)))),
  );
  app.post(
    '/api/libraries/:owner/:repo/refresh',
    route(async (req, res) => res.status(202).json(await s.operations.libraryRefresh({ libraryId: idOf(req.params) }, callerOf(res)))),
  );
  for (const path of ['/api/libraries/:owner/:repo', '/api/libraries/:id']) {
    app.delete(
      path,
      route(async (req, res) => (await s.operations.libraryDelete({ libraryId: idOf(req.params) }, callerOf(res)), res.status(204).end())),
    );
    app.get(
      path,
      route(async (req, res) => res.json(await s.operations.libraryGet({ libraryId: idOf(req.params) }, callerOf(res)))),
    );
    app.patch(
      path,
      route(async (req, res) => res.json(await s.operations.libraryUpdate({ ...(req.body ?? {}), libraryId: idOf(req.params) }, callerOf(res)))),
    );
  }
}
