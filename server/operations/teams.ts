import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import type { TeamService } from '../teams/index.ts';
import * as c from '../contracts/teams.ts';
import type { Plan } from '../teams/plans.ts';
import type { binder } from './bind.ts';
import type { Caller } from './admit.ts';

/**
 * Teamspace administration over REST, for the teamspace of the caller's key. (The CLI manages
 * teamspaces on the data dir with `stacks teams|members|keys`, naming the teamspace.)
 */
export function teamOperations(bind: ReturnType<typeof binder>, t: TeamService) {
  const who = (p: Principal | null): Principal => {
    if (!p) throw new ApiError('invalid_api_key', 'An API key is required: send Authorization: Bearer <key>.');
    return p;
  };
  return {
    policiesGet: bind(c.policiesGetOperation, (_i, p) => t.policies.view(who(p).teamspaceId)),
    /** `replace`: PUT (missing fields take the defaults) rather than PATCH (merged). */
    policiesUpdate: (raw: unknown, replace: boolean, caller: Caller) =>
      bind(c.policiesUpdateOperation, (i, p) => {
        t.policies.update(who(p).teamspaceId, i, replace);
        return t.policies.view(who(p).teamspaceId);
      })(raw, caller),
    usage: bind(c.usageOperation, (i, p) => t.usage.report(who(p), i.days)),
    teamspaceGet: bind(c.teamspaceGetOperation, (_i, p) => t.plans.get(who(p).teamspaceId)),
    teamspaceUpdate: bind(c.teamspaceUpdateOperation, (i, p) => t.plans.update(who(p).teamspaceId, i as typeof i & { plan?: Plan })),
    rulesList: bind(c.rulesListOperation, (_i, p) => ({ rules: t.rules.list(who(p).teamspaceId) })),
    ruleAdd: bind(c.ruleAddOperation, (i, p) => t.rules.add(who(p).teamspaceId, i)),
    ruleRemove: bind(c.ruleRemoveOperation, (i, p) => t.rules.remove(who(p).teamspaceId, i.id)),
    membersList: bind(c.membersListOperation, (_i, p) => ({ members: t.members.list(who(p).teamspaceId), maxMembers: t.members.maxMembers() })),
    memberAdd: bind(c.memberAddOperation, (i, p) => {
      const { member, key } = t.members.add(who(p).teamspaceId, who(p).role, i);
      return { member, key: key ? { id: key.id, key: key.key, name: key.name } : null };
    }),
    memberRole: bind(c.memberRoleOperation, (i, p) => t.members.setRole(who(p).teamspaceId, who(p).role, i.id, i.role)),
    memberRemove: bind(c.memberRemoveOperation, (i, p) => t.members.remove(who(p).teamspaceId, who(p).role, i.id)),
    // A member sees and revokes only its own keys; owners and admins all of the teamspace's.
    keysList: bind(c.keysListOperation, (_i, p) => ({ keys: t.members.listKeys(who(p).teamspaceId, who(p).role === 'member' ? who(p).memberId : undefined) })),
    // A member (a signed-in user, or a key) creates keys for itself; owners and admins for anyone of the teamspace.
    keyCreate: bind(c.keyCreateOperation, (i, p) => {
      if (who(p).role === 'member' && i.memberId !== undefined && i.memberId !== who(p).memberId) throw new ApiError('forbidden', 'A member creates keys for itself only.');
      const k = t.members.createKey(who(p).teamspaceId, who(p).role, i.memberId ?? who(p).memberId, i.name, i.scope);
      return { id: k.id, key: k.key, name: k.name, memberId: k.memberId, memberName: k.memberName, role: k.role, scope: k.scope };
    }),
    keyRevoke: bind(c.keyRevokeOperation, (i, p) => t.members.revokeKey(who(p).teamspaceId, who(p).role, i.id, who(p).role === 'member' ? who(p).memberId : undefined)),
  };
}
