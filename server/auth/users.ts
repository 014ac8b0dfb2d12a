import crypto from 'node:crypto';
import type { Store } from '../store/index.ts';
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

/** How a user gets a member: added through the member service, which enforces the license's seats. */
export interface MemberPort {
  add(teamspaceId: number, name: string, role: Role): number;
  setRole(memberId: number, role: Role): void;
  remove(memberId: number): void;
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
    private readonly store: Store,
    private readonly members: MemberPort,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  list(teamspaceId?: number): UserView[] {
    return this.store.users
      .list()
      .filter((u) => teamspaceId === undefined || u.teamspace_id === teamspaceId)
      .map(view);
  }

  get(id: number): UserView {
    const u = this.store.users.byId(id);
    if (!u) throw new ApiError('not_found', `No user with id ${id}.`);
    return view(u);
  }

  byUsername(username: string): UserView {
    const u = this.store.users.byUsername(username.trim().toLowerCase());
    if (!u) throw new ApiError('not_found', `No user named "${username}".`);
    return view(u);
  }

  /**
   * A local user with a password, acting as a new member of `teamspaceId` with `role`. `claim` runs
   * in the same transaction once the user exists (an invitation marks itself used there): when it
   * throws, no user is made.
   */
  async create(input: { username: string; password: string; teamspaceId: number; role: Role }, claim?: (userId: number) => void): Promise<UserView> {
    const username = checkUsername(input.username);
    if (this.store.users.byUsername(username)) throw new ApiError('conflict', `A user named "${username}" already exists.`);
    const passwordHash = await hashPassword(input.password);
    return this.store.db.transaction(() => {
      // Checked again inside the transaction: the hash took time, another request may have taken the name.
      if (this.store.users.byUsername(username)) throw new ApiError('conflict', `A user named "${username}" already exists.`);
      const memberId = this.members.add(input.teamspaceId, this.freeMemberName(input.teamspaceId, username), input.role);
      const id = this.store.users.insert({ memberId, username, passwordHash, ssoIssuer: null, ssoSubject: null, now: this.now() });
      claim?.(id);
      return this.get(id);
    })();
  }

  /** Whether a user name is taken (an invitation that names one checks it when it is made). */
  exists(username: string): boolean {
    return this.store.users.byUsername(username.trim().toLowerCase()) !== null;
  }

  /** The user whose password this is, or null; as slow for an unknown name as for a wrong password. */
  async checkPassword(username: string, password: string): Promise<UserMemberRow | null> {
    const u = this.store.users.byUsername(username.trim().toLowerCase());
    const ok = await verifyPassword(password, u?.password_hash ?? DUMMY_HASH);
    return ok && u && usable(u) ? u : null;
  }

  /**
   * The SSO user for (issuer, subject), created at the first sign-in and moved to the mapped
   * teamspace and role at each later one (the identity provider's groups are the truth).
   */
  provision(input: { issuer: string; subject: string; username: string; teamspaceId: number; role: Role }): UserMemberRow {
    return this.store.db.transaction(() => {
      const known = this.store.users.bySubject(input.issuer, input.subject);
      if (known) {
        if (known.teamspace_id !== input.teamspaceId) {
          const memberId = this.members.add(input.teamspaceId, this.freeMemberName(input.teamspaceId, known.username), input.role);
          this.store.users.relink(known.id, memberId);
          this.members.remove(known.member_id);
        } else if (known.role !== input.role) {
          this.members.setRole(known.member_id, input.role);
        }
        return this.store.users.byId(known.id)!;
      }
      const username = this.freeUsername(input.username);
      const memberId = this.members.add(input.teamspaceId, this.freeMemberName(input.teamspaceId, username), input.role);
      const id = this.store.users.insert({ memberId, username, passwordHash: null, ssoIssuer: input.issuer, ssoSubject: input.subject, now: this.now() });
      return this.store.users.byId(id)!;
    })();
  }

  /** The stored row (with its member) of a user. */
  principalRow(id: number): UserMemberRow {
    const u = this.store.users.byId(id);
    if (!u) throw new ApiError('not_found', `No user with id ${id}.`);
    return u;
  }

  /** Whether a user (by row) may have a session: not disabled, its member not removed. */
  usable(u: UserMemberRow): boolean {
    return usable(u);
  }

  signedIn(id: number): void {
    this.store.users.signedIn(id, this.now());
  }

  setDisabled(id: number, disabled: boolean): UserView {
    this.get(id);
    this.store.users.setDisabled(id, disabled ? this.now() : null);
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
    const u = this.get(id);
    if (u.kind !== 'local') throw new ApiError('conflict', `${u.username} signs in through single sign-on and has no password here.`);
    this.store.users.setPassword(id, await hashPassword(password), keepSessionId === null ? null : sessionIdHash(keepSessionId));
    return u;
  }

  /** The principal a signed-in user acts as: its member's teamspace and role. */
  principal(u: UserMemberRow): Principal {
    return { keyId: 0, userId: u.id, memberId: u.member_id, memberName: u.member_name, teamspaceId: u.teamspace_id, role: u.role, scope: 'all' };
  }

  /** A one-time link token for creating the first owner (printed at first start), or null when users exist or one was made. */
  newSetupToken(): string | null {
    if (this.store.users.count() > 0 || this.store.users.setupTokenCount() > 0) return null;
    const token = crypto.randomBytes(24).toString('base64url');
    const now = Date.now();
    this.store.users.insertSetupToken(hash(token), new Date(now).toISOString(), new Date(now + SETUP_TTL_MS).toISOString());
    return token;
  }

  /** Creates the first owner with the setup token (in the default teamspace); the token works once. */
  async completeSetup(token: string, input: { username: string; password: string }, defaultTeamspaceId: number): Promise<UserView> {
    const username = checkUsername(input.username);
    const passwordHash = await hashPassword(input.password);
    return this.store.db.transaction(() => {
      if (!this.store.users.useSetupToken(hash(token), this.now()))
        throw new ApiError('forbidden', 'This setup link is invalid, expired or was already used; create users with `stacks users create` on the server.');
      if (this.store.users.byUsername(username)) throw new ApiError('conflict', `A user named "${username}" already exists.`);
      const memberId = this.members.add(defaultTeamspaceId, this.freeMemberName(defaultTeamspaceId, username), 'owner');
      const id = this.store.users.insert({ memberId, username, passwordHash, ssoIssuer: null, ssoSubject: null, now: this.now() });
      return this.get(id);
    })();
  }

  private freeUsername(wanted: string): string {
    const base =
      wanted
        .toLowerCase()
        .replace(/[^a-z0-9._@-]+/g, '-')
        .replace(/^[^a-z0-9]+/, '')
        .slice(0, 56) || 'user';
    for (let i = 1; ; i++) {
      const name = i === 1 ? base : `${base}-${i}`;
      if (!this.store.users.byUsername(name)) return name;
    }
  }

  private freeMemberName(teamspaceId: number, wanted: string): string {
    for (let i = 1; ; i++) {
      const name = i === 1 ? wanted : `${wanted}-${i}`;
      if (!this.store.accounts.memberByName(teamspaceId, name)) return name;
    }
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
