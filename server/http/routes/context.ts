import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { callerOf } from '../auth.ts';

/** GET /api/v2/context: documentation snippets of one library for a question (text or JSON). */
export function mountContext(app: Express, s: Services): void {
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
