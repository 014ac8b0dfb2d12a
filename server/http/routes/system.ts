import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { openApiDocument } from '../../contracts/openapi.ts';
import { VERSION } from '../../version.ts';

/** Liveness, license information and the OpenAPI description of the API. */
export function mountSystem(app: Express, s: Services): void {
  app.get('/ping', (_req, res) => {
    res.json({ status: 'ok', message: 'pong' });
  });

  // Built once: the operations are fixed at start.
  let description: Record<string, unknown> | null = null;
  app.get('/api/openapi.json', (_req, res) => {
    description ??= openApiDocument(VERSION);
    res.json(description);
  });

  app.get(
    '/api/license',
    route((_req, res) => {
      const st = s.license.status();
      res.json({ state: st.state, message: st.message, signedBy: st.signedBy, license: st.license });
    }),
  );
}
