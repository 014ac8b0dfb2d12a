import type { Express } from 'express';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';
import type { Operations } from '../../operations/index.ts';
import { openApiDocument } from '../../contracts/openapi.ts';
import { VERSION } from '../../version.ts';

/** What these routes use. */
export interface SystemDeps {
  operations: Pick<Operations, 'license' | 'licenseInstall' | 'system'>;
}

/** Liveness, the license (read by anyone, installed by an owner), the instance's figures, and the OpenAPI description of the API. */
export function mountSystem(app: Express, s: SystemDeps): void {
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
    route(async (req, res) => res.json(await s.operations.license(req.query, callerOf(res)))),
  );
  app.post(
    '/api/license',
    route(async (req, res) => res.json(await s.operations.licenseInstall(req.body ?? {}, callerOf(res)))),
  );
  app.get(
    '/api/system',
    route(async (req, res) => res.json(await s.operations.system(req.query, callerOf(res)))),
  );
}
