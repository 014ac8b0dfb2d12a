import type { Express } from 'express';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { LibrarySearchService, SearchService } from '../../search/contracts.ts';
import { route } from '../handler.ts';
import { searchPrincipal } from '../auth.ts';
import { validate } from '../../../lib/validate.ts';
import { VERSION_PATTERN } from '../../search/version.ts';

/** The first value of a parameter sent once where one is expected (a repeated one arrives as an array). */
const single = (v: unknown) => (Array.isArray(v) && v.length > 0 ? v[0] : v);

/** Query parameters of GET /api/v3/search, with the spec's limits. `library` is repeated (form style, exploded). */
export const searchQuerySchema = z.object({
  query: z.preprocess(single, z.string().min(1).max(2000)),
  type: z.preprocess(single, z.enum(['json', 'txt']).default('txt')),
  library: z
    .preprocess((v) => (v === undefined ? [] : typeof v === 'string' ? [v] : v), z.array(z.string().min(1).max(120)).max(4))
    .default([]),
  version: z.preprocess(single, z.string().regex(VERSION_PATTERN, 'must be "latest" or a version such as 4, v4.2, 1_2_3, 1.2.3-rc.1').optional()),
  language: z.preprocess(single, z.string().min(1).max(40).optional()),
});

/** Query parameters of GET /api/v2/libs/search. */
export const libsSearchQuerySchema = z.object({
  libraryName: z.preprocess(single, z.string().min(1).max(500)),
  query: z.preprocess(single, z.string().min(1).max(500)),
});

export interface SearchRouteDeps {
  search: SearchService;
  librarySearch: LibrarySearchService;
  config: Pick<Config, 'allowAnonymousSearch'>;
}

/** GET /api/v3/search (multi-library search) and GET /api/v2/libs/search (library lookup for resolve-library-id). */
export function mountSearch(app: Express, s: SearchRouteDeps): void {
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
