import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface SearchRouteDeps {
  operations: Pick<Operations, 'search' | 'libsSearch'>;
}

/** GET /api/v3/search (multi-library search) and GET /api/v2/libs/search (library lookup for resolve-library-id). */
export function mountSearch(app: Express, s: SearchRouteDeps): void {
  app.get(
    '/api/v3/search',
    route(async (req, res) => {
      const { format, answer } = await s.operations.search(req.query, callerOf(res));
      for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, String(v));
      if (format === 'json') res.json(answer.json);
      else res.type('text/plain; charset=utf-8').send(answer.text);
    }),
  );
  app.get(
    '/api/v2/libs/search',
    route(async (req, res) => {
      res.json(await s.operations.libsSearch(req.query, callerOf(res)));
    }),
  );
}
