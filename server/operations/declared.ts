import { ApiError } from '../../lib/errors.ts';
import type { DeclaredSources } from '../sources/declared/reconcile.ts';
import { reconcileOperation } from '../contracts/declared.ts';
import type { binder } from './bind.ts';

export interface DeclaredOperationDeps {
  declared: Pick<DeclaredSources, 'reconcile'>;
  defaultTeamspaceId(): number;
}

/** sources.yaml is the instance's: reconciled by an owner or admin of the default teamspace, or the operator. */
export function declaredOperations(bind: ReturnType<typeof binder>, d: DeclaredOperationDeps) {
  return {
    sourcesReconcile: bind(reconcileOperation, (_i, p) => {
      if (p && p.teamspaceId !== d.defaultTeamspaceId())
        throw new ApiError('forbidden', 'sources.yaml belongs to the instance: an owner or admin of the default teamspace reconciles it.');
      return d.declared.reconcile();
    }),
  };
}
