import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { searchPrincipal } from '../auth.ts';
import { validate } from '../validate.ts';
import { libsSearchQuerySchema, searchQuerySchema } from '../../search/request-schemas.ts';

/** GET /api/v3/search (multi-library search) and GET /api/v2/libs/search (library lookup for resolve-library-id). */
export function mountSearch(app: Express, s: Services): void {
  app.get(
    '/api/v3/search',
    route(async (req, res) => {
      const p = validate(searchQuerySchema, req.query);
      const out = await s.search.search({ query: p.query, libraries: p.library, version: p.version, language: p.language }, searchPrincipal(res, s.config));
      for (const [k, v] of Object.entries(out.headers)) res.setHeader(k, String(v));
      if (p.type === 'json') res.json(out.json);
      else res.type('text/plain; charset=utf-8').send(out.text);
    }),
  );
  app.get(
    '/api/v2/libs/search',
    route(async (req, res) => {
      const p = validate(libsSearchQuerySchema, req.query);
      res.json(await s.librarySearch.search({ libraryName: p.libraryName, query: p.query }, searchPrincipal(res, s.config)));
    }),
  );
}
