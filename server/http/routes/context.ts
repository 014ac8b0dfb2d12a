import type { Express } from 'express';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { ContextService } from '../../search/contracts.ts';
import { route } from '../handler.ts';
import { searchPrincipal } from '../auth.ts';
import { validate } from '../../../lib/validate.ts';

const flag = z.enum(['true', 'false']).default('false').transform((v) => v === 'true');

/** Query parameters of GET /api/v2/context, with the spec's limits. */
export const contextQuerySchema = z.object({
  libraryId: z.string().min(1).max(500),
  query: z.string().min(1).max(500),
  type: z.enum(['json', 'txt']).default('txt'),
  fast: flag,
  researchMode: flag,
});

export interface ContextRouteDeps {
  context: ContextService;
  config: Pick<Config, 'allowAnonymousSearch'>;
}

/** GET /api/v2/context: documentation snippets of one library for a question (text or JSON). */
export function mountContext(app: Express, s: ContextRouteDeps): void {
  app.get(
    '/api/v2/context',
    route(async (req, res) => {
      // A repeated parameter arrives as an array; the spec has none, so take the first value.
      const raw = Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
      const p = validate(contextQuerySchema, raw);
      const out = await s.context.query({ libraryId: p.libraryId, query: p.query, fast: p.fast, researchMode: p.researchMode }, searchPrincipal(res, s.config));
      for (const [k, v] of Object.entries(out.headers)) res.setHeader(k, String(v));
      if (p.type === 'json') res.json(out.json);
      else res.type('text/plain; charset=utf-8').send(out.text);
    }),
  );
}
