import crypto from 'node:crypto';
import type { Stores } from '../store/stores.ts';
import type { UserMemberRow } from '../store/users.ts';
import type { Principal, Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { DUMMY_HASH, hashPassword, verifyPassword } from './passwords.ts';
import { sessionIdHash } from './sessions.ts';

export interface UserView {
  id: number;
  username: string;
  memberId: number;
  teamspace: string;
  role: Role;
  /** `local` (password) or `sso` (OpenID Connect). */
  kind: 'local' | 'sso';
  createdAt: string;
  lastSignInAt: string | null;
  disabled: boolean;
}

/** Lower-case names, as typed at sign-in. */
export const USERNAME = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

/** What a user's member is checked against: the license's seats (MemberService.maxMembers). */
export interface MemberPort {
  maxSeats(): number | null;
}

const SETUP_TTL_MS = 7 * 86_400_000;
const hash = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/**
 * People who sign in to the console. A user acts as one member of a teamspace (its role, its
 * keys). Local users have a password (scrypt); SSO users are provisioned at their first sign-in
 * from the claims mapping (server/auth/oidc.ts).
 */
export class UserService {
  constructor(
    private readonly store: Stores,
    private readonly members: MemberPort,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  async list(teamspaceId?: number): Promise<UserView[]> {
    return (await this.store.users.list()).filter((u) => teamspaceId === undefined || u.teamspace_id === teamspaceId).map(view);
  }

  async get(id: number): Promise<UserView> {
    const u = await this.store.users.byId(id);
    if (!u) throw new ApiError('not_found', `No user with id ${id}.`);
    return view(u);
  }

  async byUsername(username: string): Promise<UserView> {
    const u = await this.store.users.byUsername(username.trim().toLowerCase());
    if (!u) throw new ApiError('not_found', `No user named "${username}".`);
    return view(u);
  }

  /**
   * A local user with a password, acting as a new member of `teamspaceId` with `role`, made in one
   * store transaction with what it uses up: `invitationId`'s invitation (refused when another
   * request used it meanwhile: no user is made).
   */
  async create(input: { username: string; password: string; teamspaceId: number; role: Role; invitationId?: number }): Promise<UserView> {
    const username = checkUsername(input.username);
    if (await this.store.users.byUsername(username)) throw new ApiError('conflict', `A user named "${username}" already exists.`);
    const passwordHash = await hashPassword(input.password);
    // Checked again in the transaction: the hash took time, another request may have taken the name.
    const id = await this.store.membership.createUser({
      ...this.newMember(input.teamspaceId, input.role),
      username,
      memberName: username,
      passwordHash,
      sso: null,
      ...(input.invitationId !== undefined ? { invitationId: input.invitationId } : {}),
    });
    return this.get(id);
  }

  private newMember(teamspaceId: number, role: Role) {
    return { teamspaceId, role, email: null, maxSeats: this.members.maxSeats(), now: this.now() };
  }

  /** Whether a user name is taken (an invitation that names one checks it when it is made). */
  async exists(username: string): Promise<boolean> {
    return (await this.store.users.byUsername(username.trim().toLowerCase())) !== null;
  }

  /** The user whose password this is, or null; as slow for an unknown name as for a wrong password. */
  async checkPassword(username: string, password: string): Promise<UserMemberRow | null> {
    const u = await this.store.users.byUsername(username.trim().toLowerCase());
    const ok = await verifyPassword(password, u?.password_hash ?? DUMMY_HASH);
    return ok && u && usable(u) ? u : null;
  }

  /**
   * The SSO user for (issuer, subject), created at the first sign-in and moved to the mapped
   * teamspace and role at each later one (the identity provider's groups are the truth).
   */
  provision(input: { issuer: string; subject: string; username: string; teamspaceId: number; role: Role }): Promise<UserMemberRow> {
    return this.store.membership.provisionSsoUser({
      ...this.newMember(input.teamspaceId, input.role),
      username: input.username,
      memberName: input.username,
      passwordHash: null,
      sso: { issuer: input.issuer, subject: input.subject },
    });
  }

  /** The stored row (with its member) of a user. */
  async principalRow(id: number): Promise<UserMemberRow> {
    const u = await this.store.users.byId(id);
    if (!u) throw new ApiError('not_found', `No user with id ${id}.`);
    return u;
  }

  /** Whether a user (by row) may have a session: not disabled, its member not removed. */
  usable(u: UserMemberRow): boolean {
    return usable(u);
  }

  async signedIn(id: number): Promise<void> {
    await this.store.users.signedIn(id, this.now());
  }

  async setDisabled(id: number, disabled: boolean): Promise<UserView> {
    await this.get(id);
    await this.store.users.setDisabled(id, disabled ? this.now() : null);
    return this.get(id);
  }

  /**
   * Sets a local user's password and ends every session of that user but `keepSessionId`: whoever
   * knew the old password (or held a stolen cookie) is signed out. The API passes the caller's own
   * session, which survives only when it is one of this user's (a user changing its own password
   * stays signed in; an administrator changing someone else's ends them all); the CLI passes none.
   * The one place every entry point changes a password through, so none can forget the sessions.
   */
  async setPassword(id: number, password: string, keepSessionId: string | null = null): Promise<UserView> {
    const u = await this.get(id);
    if (u.kind !== 'local') throw new ApiError('conflict', `${u.username} signs in through single sign-on and has no password here.`);
    await this.store.users.setPassword(id, await hashPassword(password), keepSessionId === null ? null : sessionIdHash(keepSessionId));
    return u;
  }

  /** The principal a signed-in user acts as: its member's teamspace and role. */
  principal(u: UserMemberRow): Principal {
    return { keyId: 0, userId: u.id, memberId: u.member_id, memberName: u.member_name, teamspaceId: u.teamspace_id, role: u.role, scope: 'all' };
  }

  /** A one-time link token for creating the first owner (printed at first start), or null when users exist or one was made. */
  async newSetupToken(): Promise<string | null> {
    if ((await this.store.users.count()) > 0 || (await this.store.users.setupTokenCount()) > 0) return null;
    const token = crypto.randomBytes(24).toString('base64url');
    const now = Date.now();
    await this.store.users.insertSetupToken(hash(token), new Date(now).toISOString(), new Date(now + SETUP_TTL_MS).toISOString());
    return token;
  }

  /** Creates the first owner with the setup token (in the default teamspace); the token works once. */
  async completeSetup(token: string, input: { username: string; password: string }, defaultTeamspaceId: number): Promise<UserView> {
    const username = checkUsername(input.username);
    const passwordHash = await hashPassword(input.password);
    // The token is used up with the user's creation, in one store transaction.
    const id = await this.store.membership.createUser({
      ...this.newMember(defaultTeamspaceId, 'owner'),
      username,
      memberName: username,
      passwordHash,
      sso: null,
      setupTokenHash: hash(token),
    });
    return this.get(id);
  }
}

export function checkUsername(raw: string): string {
  const username = raw.trim().toLowerCase();
  if (!USERNAME.test(username))
    throw new ApiError('validation_error', 'username: 1-64 lower-case letters, digits, . _ @ or -, starting with a letter or digit.');
  return username;
}

function usable(u: UserMemberRow): boolean {
  return u.disabled_at === null && u.member_removed_at === null;
}

function view(u: UserMemberRow): UserView {
  return {
    id: u.id,
    username: u.username,
    memberId: u.member_id,
    teamspace: u.teamspace,
    role: u.role,
    kind: u.sso_subject ? 'sso' : 'local',
    createdAt: u.created_at,
    lastSignInAt: u.last_sign_in_at,
    disabled: u.disabled_at !== null,
  };
}
