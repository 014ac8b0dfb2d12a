import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import type { InvitationService } from '../auth/invitations.ts';
import type { SignInService } from '../auth/sign-in.ts';
import {
  invitationAcceptOperation,
  invitationCreateOperation,
  invitationPreviewOperation,
  invitationRevokeOperation,
  invitationsListOperation,
} from '../contracts/invitations.ts';
import type { binder } from './bind.ts';
import type { Caller } from './admit.ts';

export interface InvitationOperationDeps {
  invitations: InvitationService;
  signIn: Pick<SignInService, 'invitation' | 'defaultTeamspace'>;
  ssoEnabled: boolean;
}

/**
 * Invitations to console accounts. An owner or admin invites into their own teamspace (the CLI
 * operator into the default one); the owner role only by an owner, as with members. Accepting is
 * open: the link's token is the proof.
 */
export function invitationOperations(bind: ReturnType<typeof binder>, d: InvitationOperationDeps) {
  const teamspaceOf = (p: Principal | null) => p?.teamspaceId ?? d.signIn.defaultTeamspace();
  const ipOf = (caller: Caller) => (caller.kind === 'key' ? (caller.ip ?? null) : null);
  return {
    invitationCreate: bind(invitationCreateOperation, (i, p) => {
      if (p && i.role === 'owner' && p.role !== 'owner') throw new ApiError('forbidden', 'Only an owner can invite an owner.');
      return d.invitations.create({
        teamspaceId: teamspaceOf(p),
        role: i.role,
        username: i.username,
        email: i.email,
        invitedBy: p ? p.memberName : 'operator',
        days: i.days,
      });
    }),
    invitationsList: bind(invitationsListOperation, async (_i, p) => ({ invitations: await d.invitations.list(teamspaceOf(p)) })),
    invitationRevoke: bind(invitationRevokeOperation, (i, p) => d.invitations.revoke(teamspaceOf(p), i.id)),
    invitationPreview: bind(invitationPreviewOperation, async (i) => ({ ...(await d.invitations.preview(i.token)), sso: d.ssoEnabled })),
    invitationAccept: bind(invitationAcceptOperation, (i, _p, caller) =>
      d.signIn.invitation(i.token, { username: i.username, password: i.password }, ipOf(caller)),
    ),
  };
}
