import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface AuditRouteDeps {
  operations: Pick<Operations, 'auditList'>;
}

/** GET /api/audit: the audit log, newest first, paged with `before`. */
export function mountAudit(app: Express, s: AuditRouteDeps): void {
  app.get(
    '/api/audit',
    route(async (req, res) => res.json(await s.operations.auditList(req.query, callerOf(res)))),
  );
}
