import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import type { TeamService } from '../teams/index.ts';
import type { Actor } from '../teams/members.ts';
import * as c from '../contracts/teams.ts';
import type { Plan } from '../teams/plans.ts';
import type { AuditNote, binder } from './bind.ts';
import type { Caller } from './admit.ts';

/** Who acts on a teamspace: its id, the role the member service checks, and the acting member (null: the operator). */
interface Acting {
  teamspaceId: number;
  role: Actor;
  memberId: number | null;
}

/**
 * Teamspace administration: over REST for the teamspace of the caller's key; for the local
 * operator (`stacks teamspaces|policies|plan|usage|rules|members|keys`) in the teamspace it names
 * (default: the first one), with an owner's rights, its changes filed in that teamspace's audit log.
 */
/** The teamspace a local caller acts in: the one it names, else the default (first) one. */
export async function localTeamspace(t: TeamService, caller: Caller): Promise<number> {
  return caller.kind === 'local' && caller.teamspace !== undefined ? (await t.teamspaces.byName(caller.teamspace)).id : t.defaultTeamspaceId();
}

async function actingOf(t: TeamService, p: Principal | null, caller: Caller, note: AuditNote): Promise<Acting> {
  if (p) return { teamspaceId: p.teamspaceId, role: p.role, memberId: p.memberId };
  if (caller.kind !== 'local') throw new ApiError('invalid_api_key', 'An API key is required: send Authorization: Bearer <key>.');
  const teamspaceId = await localTeamspace(t, caller);
  note.teamspaceId = teamspaceId;
  return { teamspaceId, role: 'operator', memberId: null };
}

export function teamOperations(bind: ReturnType<typeof binder>, t: TeamService) {
  const acting = (p: Principal | null, caller: Caller, note: AuditNote) => actingOf(t, p, caller, note);
  const space = async (p: Principal | null, caller: Caller, note: AuditNote) => (await acting(p, caller, note)).teamspaceId;
  /** A key's member sees and revokes only its own keys; owners, admins and the operator all of the teamspace's. */
  const onlyOwn = (a: Acting) => (a.role === 'member' ? (a.memberId ?? undefined) : undefined);
  /** The operator naming no teamspace manages the keys of the whole instance. */
  const instanceWide = (p: Principal | null, caller: Caller) => !p && caller.kind === 'local' && caller.teamspace === undefined;
  return {
    policiesGet: bind(c.policiesGetOperation, async (_i, p, caller, note) => t.policies.view(await space(p, caller, note))),
    /** `replace`: PUT (missing fields take the defaults) rather than PATCH (merged). */
    policiesUpdate: (raw: unknown, replace: boolean, caller: Caller) =>
      bind(c.policiesUpdateOperation, async (i, p, cl, note) => {
        const id = await space(p, cl, note);
        await t.policies.update(id, i, replace);
        return t.policies.view(id);
      })(raw, caller),
    usage: bind(c.usageOperation, (i, p) => {
      if (!p) throw new ApiError('invalid_api_key', 'An API key is required: send Authorization: Bearer <key>.');
      return t.usage.report(p, i.days);
    }),
    teamspaceGet: bind(c.teamspaceGetOperation, async (_i, p, caller, note) => t.plans.get(await space(p, caller, note))),
    teamspaceUpdate: bind(c.teamspaceUpdateOperation, async (i, p, caller, note) =>
      t.plans.update(await space(p, caller, note), i as typeof i & { plan?: Plan }),
    ),
    rulesList: bind(c.rulesListOperation, async (_i, p, caller, note) => ({ rules: await t.rules.list(await space(p, caller, note)) })),
    ruleAdd: bind(c.ruleAddOperation, async (i, p, caller, note) => t.rules.add(await space(p, caller, note), i)),
    ruleRemove: bind(c.ruleRemoveOperation, async (i, p, caller, note) => t.rules.remove(await space(p, caller, note), i.id)),
    membersList: bind(c.membersListOperation, async (_i, p, caller, note) => ({
      members: await t.members.list(await space(p, caller, note)),
      maxMembers: t.members.maxMembers(),
    })),
    memberAdd: bind(c.memberAddOperation, async (i, p, caller, note) => {
      const a = await acting(p, caller, note);
      const { member, key } = await t.members.add(a.teamspaceId, a.role, i);
      return { member, key: key ? { id: key.id, key: key.key, name: key.name } : null };
    }),
    memberRole: bind(c.memberRoleOperation, async (i, p, caller, note) => {
      const a = await acting(p, caller, note);
      return t.members.setRole(a.teamspaceId, a.role, i.id, i.role);
    }),
    memberRemove: bind(c.memberRemoveOperation, async (i, p, caller, note) => {
      const a = await acting(p, caller, note);
      return t.members.remove(a.teamspaceId, a.role, i.id);
    }),
    keysList: bind(c.keysListOperation, async (_i, p, caller, note) => {
      if (await instanceWide(p, caller)) return { keys: await t.members.allKeys() };
      const a = await acting(p, caller, note);
      return { keys: await t.members.listKeys(a.teamspaceId, onlyOwn(a)) };
    }),
    // A member (a signed-in user, or a key) creates keys for itself; owners, admins and the operator for anyone of the teamspace.
    keyCreate: bind(c.keyCreateOperation, async (i, p, caller, note) => {
      const a = await acting(p, caller, note);
      if (a.role === 'member' && i.memberId !== undefined && i.memberId !== a.memberId)
        throw new ApiError('forbidden', 'A member creates keys for itself only.');
      const memberId = i.memberId ?? a.memberId;
      if (memberId === null) throw new ApiError('validation_error', 'memberId: the member the key is for.');
      const k = await t.members.createKey(a.teamspaceId, a.role, memberId, i.name, i.scope);
      return { id: k.id, key: k.key, name: k.name, memberId: k.memberId, memberName: k.memberName, role: k.role, scope: k.scope };
    }),
    keyRevoke: bind(c.keyRevokeOperation, async (i, p, caller, note) => {
      if (await instanceWide(p, caller)) {
        const key = (await t.members.allKeys()).find((k) => k.id === i.id);
        if (!key) throw new ApiError('not_found', `No API key with id ${i.id}.`);
        note.teamspaceId = key.teamspaceId;
        return t.members.revokeKey(key.teamspaceId, 'operator', i.id);
      }
      const a = await acting(p, caller, note);
      return t.members.revokeKey(a.teamspaceId, a.role, i.id, onlyOwn(a));
    }),
    ...localTeamOperations(bind, t),
  };
}

/** What only the operator on the box does: teamspaces across the instance, any member's usage. */
function localTeamOperations(bind: ReturnType<typeof binder>, t: TeamService) {
  return {
    teamspacesList: bind(c.teamspacesListOperation, async () => ({ teamspaces: await t.teamspaces.list() })),
    teamspaceCreate: bind(c.teamspaceCreateOperation, (i) => t.teamspaces.create({ name: i.name, plan: i.plan, owner: i.owner, email: i.email ?? null })),
    memberUsage: bind(c.memberUsageOperation, async (i, p, caller, note) => {
      const { teamspaceId } = await actingOf(t, p, caller, note);
      const people = await t.members.list(teamspaceId);
      const m = await (i.member ? t.members.byName(teamspaceId, i.member) : (people.find((x) => x.role === 'owner') ?? people[0]));
      if (!m) throw new ApiError('not_found', 'The teamspace has no members.');
      return t.usage.report({ keyId: 0, memberId: m.id, memberName: m.name, teamspaceId, role: m.role, scope: 'all' }, i.days);
    }),
  };
}
