import { ApiError } from '../../lib/errors.ts';
import type { LibraryVisibility, Principal } from '../../lib/model.ts';
import type { Submitter } from '../../lib/owner.ts';

/**
 * Who adds, and so owns, a new library: the key's member in its teamspace, or (no principal:
 * the local CLI) the operator in the default teamspace. What a member adds is visible to its
 * teamspace only; what an owner, an admin or the operator adds is visible to the instance unless
 * they ask for `teamspace` (a member asking for `instance` is refused).
 */
export function submitterFor(p: Principal | null, visibility: LibraryVisibility | undefined, defaultTeamspaceId: () => number): Submitter {
  if (!p) return { memberId: null, teamspaceId: defaultTeamspaceId(), visibility: visibility ?? 'instance', operator: true };
  if (p.role === 'member') {
    if (visibility === 'instance')
      throw new ApiError(
        'forbidden',
        'Only an owner or admin can make a library visible to the whole instance; leave visibility out to add it for your teamspace.',
      );
    return { memberId: p.memberId, teamspaceId: p.teamspaceId, visibility: 'teamspace', operator: false };
  }
  return { memberId: p.memberId, teamspaceId: p.teamspaceId, visibility: visibility ?? 'instance', operator: false };
}
