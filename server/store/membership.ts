import type { Db } from './db.ts';
import type { MemberRow, TeamspaceRow } from './accounts.ts';
import type { UserMemberRow } from './users.ts';
import { USER_SELECT } from './users.ts';
import type { KeyScope, Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';

/** A member to add: its name is checked free (a removed member's is freed by renaming it) and the license's seats counted in the same transaction. */
export interface NewMember {
  teamspaceId: number;
  name: string;
  role: Role;
  email: string | null;
  /** The license's maxMembers (active people of every teamspace), null: no limit. */
  maxSeats: number | null;
  now: string;
}

/** An API key to store with its member: the secret is made by the caller, only its hash is kept. */
export interface NewKey {
  name: string;
  prefix: string;
  hash: string;
  scope: KeyScope;
}

/** A user to create with its member; `memberName` is the wanted name, suffixed -2, -3... when taken in the teamspace. */
export interface NewUser extends Omit<NewMember, 'name'> {
  username: string;
  memberName: string;
  passwordHash: string | null;
  sso: { issuer: string; subject: string } | null;
  /** Used up in the same transaction: an invitation (its id) or the setup link (its token's hash); refused when already used. */
  invitationId?: number;
  setupTokenHash?: string;
}

/** The user name an SSO user is given from its claim (made free with -2, -3... by the store). */
export function usernameBase(wanted: string): string {
  return (
    wanted
      .toLowerCase()
      .replace(/[^a-z0-9._@-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '')
      .slice(0, 56) || 'user'
  );
}

export const LAST_OWNER_REMOVED = 'The last owner cannot be removed.';
export const LAST_OWNER_DEMOTED = 'The last owner cannot be demoted; make another member owner first.';

/**
 * Changes of people that span several rows, each one transaction (BEGIN IMMEDIATE: also across
 * processes): a check and the write it allows are never apart, so two requests at once cannot
 * both take the last seat, the same name, or the last owner away.
 */
export class MembershipStore {
  constructor(private readonly db: Db) {}

  /** Adds a member (and with `key` its first API key): conflict when the name is taken, member_limit_reached when the seats are. */
  async addMember(m: NewMember, key: NewKey | null = null): Promise<{ memberId: number; keyId: number | null }> {
    return this.immediate(() => {
      const memberId = this.insertMember(m);
      return { memberId, keyId: key ? this.insertKey(memberId, key, m.now) : null };
    });
  }

  /**
   * A key for a member found by name, created with `role` when it does not exist (an existing
   * member keeps its role); validation_error when that member was removed.
   */
  async createKey(k: NewKey & { teamspaceId: number; memberName: string; role: Role; now: string }): Promise<{ id: number; member: MemberRow }> {
    return this.immediate(() => this.keyFor(k));
  }

  /** createKey at an instance's first start: null when a usable key exists, checked in the same transaction (nodes starting together make one). */
  async createFirstKey(k: NewKey & { teamspaceId: number; memberName: string; role: Role; now: string }): Promise<{ id: number; member: MemberRow } | null> {
    return this.immediate(() => (this.db.prepare('SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1').get() ? null : this.keyFor(k)));
  }

  /** createKey's body: a key for the member of that name, created with it when missing. */
  private keyFor(k: NewKey & { teamspaceId: number; memberName: string; role: Role; now: string }): { id: number; member: MemberRow } {
    let member = this.memberByName(k.teamspaceId, k.memberName);
    if (member?.removed_at) throw new ApiError('validation_error', `Member "${k.memberName}" was removed; choose another name.`);
    if (!member) {
      const id = this.createMemberRow(k.teamspaceId, k.memberName, k.role, null, k.now);
      member = this.db.prepare('SELECT * FROM members WHERE id = ?').get(id) as MemberRow;
    }
    return { id: this.insertKey(member.id, k, k.now), member };
  }

  /** A teamspace with its first owner and that owner's key, all or nothing; conflict when the name is taken. */
  async createTeamspace(
    name: string,
    plan: TeamspaceRow['plan'],
    owner: Omit<NewMember, 'teamspaceId'>,
    key: NewKey,
  ): Promise<{ teamspaceId: number; memberId: number; keyId: number }> {
    return this.immediate(() => {
      if (this.db.prepare('SELECT 1 FROM teamspaces WHERE name = ?').get(name)) throw new ApiError('conflict', `A teamspace named "${name}" already exists.`);
      const teamspaceId = Number(
        this.db.prepare('INSERT INTO teamspaces (name, plan, created_at) VALUES (?, ?, ?)').run(name, plan, owner.now).lastInsertRowid,
      );
      const memberId = this.insertMember({ ...owner, teamspaceId });
      return { teamspaceId, memberId, keyId: this.insertKey(memberId, key, owner.now) };
    });
  }

  /** A user with its new member; the invitation or setup token it names is used up in the same transaction. */
  async createUser(u: NewUser): Promise<number> {
    return this.immediate(() => {
      if (u.setupTokenHash !== undefined && !this.useSetupToken(u.setupTokenHash, u.now))
        throw new ApiError('forbidden', 'This setup link is invalid, expired or was already used; create users with `stacks users create` on the server.');
      if (this.userByName(u.username)) throw new ApiError('conflict', `A user named "${u.username}" already exists.`);
      const memberId = this.insertMember({ ...u, name: this.freeMemberName(u.teamspaceId, u.memberName) });
      const id = this.insertUser(memberId, u);
      if (u.invitationId !== undefined) {
        const used = this.db
          .prepare('UPDATE invitations SET used_at = ?, user_id = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?')
          .run(u.now, id, u.invitationId, u.now);
        // Used by another request meanwhile: this one makes no account.
        if (used.changes === 0) throw new ApiError('forbidden', 'This invitation link was already used; ask whoever invited you for a new one.');
      }
      return id;
    });
  }

  /**
   * The SSO user for (issuer, subject): created at its first sign-in (a free user name from
   * `u.username`), moved to the mapped teamspace and role at each later one (a new member there,
   * the old one removed, never the last owner).
   */
  async provisionSsoUser(u: NewUser & { sso: { issuer: string; subject: string } }): Promise<UserMemberRow> {
    return this.immediate(() => {
      const known = this.db.prepare(`${USER_SELECT} WHERE u.sso_issuer = ? AND u.sso_subject = ?`).get(u.sso.issuer, u.sso.subject) as
        | UserMemberRow
        | undefined;
      if (known) {
        if (known.teamspace_id !== u.teamspaceId) {
          const memberId = this.insertMember({ ...u, name: this.freeMemberName(u.teamspaceId, known.username) });
          this.db.prepare('UPDATE users SET member_id = ? WHERE id = ?').run(memberId, known.id);
          this.removeMemberRow(known.member_id, u.now);
        } else if (known.role !== u.role) this.setRoleRow(known.member_id, u.role);
        return this.userById(known.id)!;
      }
      const username = this.freeUsername(u.username);
      const memberId = this.insertMember({ ...u, name: this.freeMemberName(u.teamspaceId, username) });
      return this.userById(this.insertUser(memberId, { ...u, username }))!;
    });
  }

  /** Changes a member's role; conflict when it would leave its teamspace without an owner. */
  async setRole(memberId: number, role: Role): Promise<void> {
    this.immediate(() => this.setRoleRow(memberId, role));
  }

  /** Removes a member and revokes its keys; conflict when it is its teamspace's last owner. */
  async removeMember(memberId: number, now: string): Promise<void> {
    this.immediate(() => this.removeMemberRow(memberId, now));
  }

  private immediate<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  private memberByName(teamspaceId: number, name: string): MemberRow | undefined {
    return this.db.prepare('SELECT * FROM members WHERE teamspace_id = ? AND name = ?').get(teamspaceId, name) as MemberRow | undefined;
  }

  private createMemberRow(teamspaceId: number, name: string, role: Role, email: string | null, now: string): number {
    return Number(
      this.db.prepare('INSERT INTO members (teamspace_id, name, email, role, created_at) VALUES (?, ?, ?, ?, ?)').run(teamspaceId, name, email, role, now)
        .lastInsertRowid,
    );
  }

  private insertMember(m: NewMember): number {
    const existing = this.memberByName(m.teamspaceId, m.name);
    if (existing && !existing.removed_at) throw new ApiError('conflict', `A member named "${m.name}" already exists.`);
    if (m.maxSeats !== null) {
      const seats = (this.db.prepare('SELECT count(*) AS n FROM members WHERE removed_at IS NULL AND synthetic = 0').get() as { n: number }).n;
      if (seats >= m.maxSeats)
        throw new ApiError(
          'member_limit_reached',
          `The license allows ${m.maxSeats} members and all are taken; remove a member or install a license with more.`,
        );
    }
    if (existing) this.db.prepare('UPDATE members SET name = ? WHERE id = ?').run(`${existing.name} (removed #${existing.id})`, existing.id);
    return this.createMemberRow(m.teamspaceId, m.name, m.role, m.email, m.now);
  }

  private insertKey(memberId: number, k: NewKey, now: string): number {
    return Number(
      this.db
        .prepare('INSERT INTO api_keys (member_id, name, prefix, hash, created_at, scope) VALUES (?, ?, ?, ?, ?, ?)')
        .run(memberId, k.name, k.prefix, k.hash, now, k.scope).lastInsertRowid,
    );
  }

  private insertUser(memberId: number, u: Pick<NewUser, 'username' | 'passwordHash' | 'sso' | 'now'>): number {
    return Number(
      this.db
        .prepare('INSERT INTO users (member_id, username, password_hash, sso_issuer, sso_subject, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(memberId, u.username, u.passwordHash, u.sso?.issuer ?? null, u.sso?.subject ?? null, u.now).lastInsertRowid,
    );
  }

  private userByName(username: string): UserMemberRow | undefined {
    return this.db.prepare(`${USER_SELECT} WHERE u.username = ?`).get(username) as UserMemberRow | undefined;
  }

  private userById(id: number): UserMemberRow | undefined {
    return this.db.prepare(`${USER_SELECT} WHERE u.id = ?`).get(id) as UserMemberRow | undefined;
  }

  private useSetupToken(hash: string, now: string): boolean {
    return this.db.prepare('UPDATE setup_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?').run(now, hash, now).changes > 0;
  }

  private freeMemberName(teamspaceId: number, wanted: string): string {
    for (let i = 1; ; i++) {
      const name = i === 1 ? wanted : `${wanted}-${i}`;
      if (!this.memberByName(teamspaceId, name)) return name;
    }
  }

  private freeUsername(wanted: string): string {
    const base = usernameBase(wanted);
    for (let i = 1; ; i++) {
      const name = i === 1 ? base : `${base}-${i}`;
      if (!this.userByName(name)) return name;
    }
  }

  /** Owners of the member's teamspace other than it. */
  private otherOwners(memberId: number): number {
    return (
      this.db
        .prepare(
          `SELECT count(*) AS n FROM members o JOIN members m ON m.teamspace_id = o.teamspace_id
           WHERE m.id = ? AND o.id <> m.id AND o.removed_at IS NULL AND o.synthetic = 0 AND o.role = 'owner'`,
        )
        .get(memberId) as { n: number }
    ).n;
  }

  private roleOf(memberId: number): Role | undefined {
    return (this.db.prepare('SELECT role FROM members WHERE id = ? AND removed_at IS NULL').get(memberId) as { role: Role } | undefined)?.role;
  }

  private setRoleRow(memberId: number, role: Role): void {
    if (this.roleOf(memberId) === 'owner' && role !== 'owner' && this.otherOwners(memberId) === 0) throw new ApiError('conflict', LAST_OWNER_DEMOTED);
    this.db.prepare('UPDATE members SET role = ? WHERE id = ?').run(role, memberId);
  }

  private removeMemberRow(memberId: number, now: string): void {
    if (this.roleOf(memberId) === 'owner' && this.otherOwners(memberId) === 0) throw new ApiError('conflict', LAST_OWNER_REMOVED);
    this.db.prepare('UPDATE members SET removed_at = ? WHERE id = ?').run(now, memberId);
    this.db.prepare('UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE member_id = ?').run(now, memberId);
  }
}
