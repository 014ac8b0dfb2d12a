import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

export interface DeclaredRouteDeps {
  operations: Pick<Operations, 'sourcesReconcile'>;
}

/** POST /api/sources/reconcile: the report of created, updated, unchanged and pruned sources. */
export function mountDeclared(app: Express, s: DeclaredRouteDeps): void {
  app.post(
    '/api/sources/reconcile',
    route(async (req, res) => res.json(await s.operations.sourcesReconcile(req.body ?? {}, callerOf(res)))),
  );
}
