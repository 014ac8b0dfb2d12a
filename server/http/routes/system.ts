import type { Express } from 'express';
import type { LicenseService } from '../../license/license.ts';
import { route } from '../handler.ts';

export interface SystemDeps {
  license: Pick<LicenseService, 'status'>;
}

/** Liveness and license information. */
export function mountSystem(app: Express, s: SystemDeps): void {
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
