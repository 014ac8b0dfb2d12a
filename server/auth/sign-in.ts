import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import type { UserMemberRow } from '../store/users.ts';
import type { AuditLog } from '../audit/log.ts';
import type { UserService, UserView } from './users.ts';
import type { SessionService } from './sessions.ts';
import type { SignInThrottle } from './throttle.ts';
import type { InvitationService } from './invitations.ts';

export interface SignedIn {
  /** The session id for the cookie; never in a response body. */
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
  user: UserView;
}

/**
 * Signing people in to the console: with a password (throttled per name and address), with the
 * one-time setup link or an invitation link, or after single sign-on (server/auth/oidc.ts). Every attempt goes to the
 * audit log (`signIn`, ok or refused).
 */
export class SignInService {
  constructor(
    private readonly users: UserService,
    private readonly sessions: SessionService,
    private readonly throttle: SignInThrottle,
    private readonly audit: AuditLog,
    private readonly defaultTeamspaceId: () => number,
    private readonly invitations: Pick<InvitationService, 'accept'>,
  ) {}

  /** The teamspace the local operator's users join. */
  defaultTeamspace(): number {
    return this.defaultTeamspaceId();
  }

  async password(username: string, password: string, ip: string | null): Promise<SignedIn> {
    const name = username.trim().toLowerCase();
    const where = ip ?? 'unknown';
    const wait = this.throttle.retryAfter(name, where);
    if (wait > 0) {
      await this.refused(name, ip, 'throttled');
      throw new ApiError('rate_limit_exceeded', `Too many failed sign-ins; try again in ${wait} s.`, { headers: { 'Retry-After': String(wait) } });
    }
    const user = await this.users.checkPassword(name, password);
    if (!user) {
      this.throttle.failed(name, where);
      await this.refused(name, ip, 'wrong name or password');
      throw new ApiError('invalid_credentials', 'Wrong user name or password.');
    }
    this.throttle.succeeded(name, where);
    return this.start(user, ip, 'password');
  }

  async setup(token: string, input: { username: string; password: string }, ip: string | null): Promise<SignedIn> {
    const created = await this.users.completeSetup(token, input, this.defaultTeamspaceId());
    const user = await this.users.principalRow(created.id);
    return this.start(user, ip, 'setup link');
  }

  /** Creates the invitee's account with the invitation link (server/auth/invitations.ts) and signs them in. */
  async invitation(token: string, input: { username?: string; password: string }, ip: string | null): Promise<SignedIn> {
    const created = await this.invitations.accept(token, input);
    return this.start(await this.users.principalRow(created.id), ip, 'invitation link');
  }

  /** After the identity provider vouched for the user (already provisioned by the claims mapping). */
  async sso(user: UserMemberRow, ip: string | null): Promise<SignedIn> {
    return this.start(user, ip, 'single sign-on');
  }

  /** An SSO sign-in the mapping gives nothing (or the provider refused): recorded, then refused by the caller. */
  async refused(name: string | null, ip: string | null, reason: string): Promise<void> {
    await this.audit.record({
      actor: { kind: 'user', keyId: null, name, teamspaceId: null },
      action: 'signIn',
      target: name,
      sourceIp: ip,
      outcome: 'refused',
      detail: { reason },
    });
  }

  async signOut(sessionId: string, principal: Principal | null, ip: string | null): Promise<void> {
    await this.sessions.end(sessionId);
    if (principal?.userId)
      await this.audit.record({
        actor: { kind: 'user', keyId: null, name: principal.memberName, teamspaceId: principal.teamspaceId },
        action: 'signOut',
        sourceIp: ip,
        outcome: 'ok',
      });
  }

  private async start(user: UserMemberRow, ip: string | null, how: string): Promise<SignedIn> {
    const s = await this.sessions.create(user.id);
    await this.users.signedIn(user.id);
    await this.audit.record({
      actor: { kind: 'user', keyId: null, name: user.username, teamspaceId: user.teamspace_id },
      action: 'signIn',
      target: user.username,
      sourceIp: ip,
      outcome: 'ok',
      detail: { how },
    });
    return { sessionId: s.id, csrfToken: s.csrfToken, expiresAt: s.expiresAt, user: await this.users.get(user.id) };
  }
}
