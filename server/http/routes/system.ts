import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';

/** Liveness and license information. */
export function mountSystem(app: Express, s: Services): void {
  app.get('/ping', (_req, res) => {
    res.json({ status: 'ok', message: 'pong' });
  });

  app.get(
    '/api/license',
    route((_req, res) => {
      const st = s.license.status();
      res.json({ state: st.state, message: st.message, signedBy: st.signedBy, license: st.license });
    }),
  );
}
