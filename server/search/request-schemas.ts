import { z } from 'zod';
import { VERSION_PATTERN } from './version.ts';

/*
 * The request contracts of the search operations, shared by GET /api/v3/search and
 * GET /api/v2/libs/search (server/http/routes/search.ts) and `stacks search` / `stacks resolve`.
 */

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
