import type { AuditLog } from '../audit/log.ts';
import { auditListOperation } from '../contracts/audit.ts';
import type { binder } from './bind.ts';

export interface AuditOperationDeps {
  audit: AuditLog;
  defaultTeamspaceId(): number;
}

/**
 * GET /api/audit and `stacks audit`. An owner or admin reads its teamspace's entries; those of the
 * default teamspace, which administers the installation, also read instance-level ones (the
 * operator's, refused authentications). The local CLI reads everything.
 */
export function auditOperations(bind: ReturnType<typeof binder>, d: AuditOperationDeps) {
  return {
    auditList: bind(auditListOperation, (i, p) =>
      d.audit.list({ ...i, ...(p ? { teamspaceId: p.teamspaceId, withInstance: p.teamspaceId === d.defaultTeamspaceId() } : {}) }),
    ),
  };
}
