import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { searchPrincipal } from '../auth.ts';
import { validate } from '../../contracts/validate.ts';
import { contextInput } from '../../contracts/search.ts';

/** GET /api/v2/context: documentation snippets of one library for a question (text or JSON). */
export function mountContext(app: Express, s: Services): void {
  app.get(
    '/api/v2/context',
    route(async (req, res) => {
      const p = validate(contextInput, req.query);
      const out = await s.context.query({ libraryId: p.libraryId, query: p.query, fast: p.fast, researchMode: p.researchMode }, searchPrincipal(res, s.config));
      for (const [k, v] of Object.entries(out.headers)) res.setHeader(k, String(v));
      if (p.type === 'json') res.json(out.json);
      else res.type('text/plain; charset=utf-8').send(out.text);
    }),
  );
}
