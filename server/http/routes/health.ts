import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { ApiError } from '../../../lib/errors.ts';
import { route } from '../app.ts';
import { VERSION } from '../../version.ts';

/**
 * Monitoring endpoints, without a key (like /ping): /api/health describes the instance,
 * /api/ready answers 200 only while the database answers (for load balancers and orchestrators).
 */
export function mountHealth(app: Express, s: Services): void {
  app.get(
    '/api/health',
    route((_req, res) => {
      const lic = s.license.status();
      const dbOk = s.store.ping();
      let queue: Record<string, number> | null = null;
      if (dbOk) {
        try {
          queue = s.store.jobs.counts();
        } catch {
          queue = null;
        }
      }
      res.json({
        status: dbOk ? 'ok' : 'degraded',
        version: VERSION,
        uptimeSeconds: Math.round((Date.now() - s.startedAt.getTime()) / 1000),
        startedAt: s.startedAt.toISOString(),
        license: {
          state: lic.state,
          message: lic.message,
          expiresAt: lic.license?.expiresAt ?? null,
          edition: lic.license?.edition ?? null,
          licensee: lic.license?.licensee ?? null,
        },
        database: { status: dbOk ? 'ok' : 'unavailable' },
        queue: queue ? { status: 'ok', jobs: queue } : { status: 'unavailable', jobs: null },
        embedder: s.embedder ? { id: s.embedder.id, dims: s.embedder.dims } : null,
      });
    }),
  );

  app.get(
    '/api/ready',
    route((_req, res) => {
      if (!s.store.ping()) throw new ApiError('not_ready', 'The database does not answer.');
      res.json({ status: 'ready' });
    }),
  );
}
