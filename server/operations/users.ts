import { ApiError } from '../../lib/errors.ts';
import type { UserService } from '../auth/users.ts';
import type { SignInService } from '../auth/sign-in.ts';
import {
  sessionCreateOperation,
  sessionDeleteOperation,
  sessionGetOperation,
  setupOperation,
  userCreateOperation,
  usersListOperation,
  userUpdateOperation,
} from '../contracts/users.ts';
import type { binder } from './bind.ts';
import type { Caller } from './admit.ts';

export interface UserOperationDeps {
  users: UserService;
  signIn: SignInService;
  /** Whether single sign-on is configured (the sign-in page offers it). */
  ssoEnabled: boolean;
  /** The teamspace a local caller acts in (`stacks users create --teamspace`); default: the default one. */
  localTeamspace?(caller: Caller): Promise<number>;
}

const ipOf = (caller: Caller) => (caller.kind === 'key' ? (caller.ip ?? null) : null);

/**
 * Console sign-in and user management. Sign-in answers carry the session id for the entry point
 * to put in a cookie; HTTP never returns it in a body.
 */
export function userOperations(bind: ReturnType<typeof binder>, d: UserOperationDeps) {
  const sameTeamspace = async (id: number, teamspace: number) => {
    const user = await d.users.principalRow(id);
    if (user.teamspace_id !== teamspace) throw new ApiError('not_found', `No user with id ${id}.`);
    return user;
  };
  return {
    sessionCreate: bind(sessionCreateOperation, (i, _p, caller) => d.signIn.password(i.username, i.password, ipOf(caller))),
    sessionGet: bind(sessionGetOperation, async (_i, p, caller) => {
      const session = caller.kind === 'key' ? caller.session : null;
      const user = await (p?.userId && session ? d.users.get(p.userId) : null);
      return { user, csrfToken: user && session ? session.csrfToken : null, sso: d.ssoEnabled };
    }),
    sessionDelete: bind(sessionDeleteOperation, async (_i, p, caller) => {
      if (caller.kind === 'key' && caller.session) await d.signIn.signOut(caller.session.id, p, ipOf(caller));
    }),
    setup: bind(setupOperation, (i, _p, caller) => d.signIn.setup(i.token, { username: i.username, password: i.password }, ipOf(caller))),
    usersList: bind(usersListOperation, async (_i, p) => ({ users: await d.users.list(p?.teamspaceId) })),
    userCreate: bind(userCreateOperation, async (i, p, caller, note) => {
      if (!p) {
        // The local operator: in the teamspace it names, its entry in that teamspace's audit log.
        note.teamspaceId = (await d.localTeamspace?.(caller)) ?? d.signIn.defaultTeamspace();
        return d.users.create({ username: i.username, password: i.password, teamspaceId: note.teamspaceId, role: i.role });
      }
      if (i.role === 'owner' && p.role !== 'owner') throw new ApiError('forbidden', 'Only an owner can create an owner.');
      return d.users.create({ username: i.username, password: i.password, teamspaceId: p.teamspaceId, role: i.role });
    }),
    userUpdate: bind(userUpdateOperation, async (i, p, caller, note) => {
      const user = await (p ? sameTeamspace(i.id, p.teamspaceId) : d.users.principalRow(i.id));
      if (!p) note.teamspaceId = user.teamspace_id;
      if (p && user.role === 'owner' && p.role !== 'owner') throw new ApiError('forbidden', "Only an owner can change an owner's account.");
      // The user's other sessions end; the caller's own session is kept when it is this user's.
      if (i.password !== undefined) await d.users.setPassword(i.id, i.password, caller.kind === 'key' ? (caller.session?.id ?? null) : null);
      return i.disabled === undefined ? d.users.get(i.id) : d.users.setDisabled(i.id, i.disabled);
    }),
  };
}
