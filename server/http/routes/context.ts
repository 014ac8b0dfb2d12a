import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface ContextRouteDeps {
  operations: Pick<Operations, 'context'>;
}

/** GET /api/v2/context: documentation snippets of one library for a question (text or JSON). */
export function mountContext(app: Express, s: ContextRouteDeps): void {
  app.get(
    '/api/v2/context',
    route(async (req, res) => {
      const { format, answer } = await s.operations.context(req.query, callerOf(res));
      for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, String(v));
      if (format === 'json') res.json(answer.json);
      else res.type('text/plain; charset=utf-8').send(answer.text);
    }),
  );
}
