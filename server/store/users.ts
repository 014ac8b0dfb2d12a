import type { Db } from './db.ts';
import type { Role } from '../../lib/model.ts';

export interface UserRow {
  id: number;
  member_id: number;
  username: string;
  password_hash: string | null;
  sso_issuer: string | null;
  sso_subject: string | null;
  created_at: string;
  last_sign_in_at: string | null;
  disabled_at: string | null;
}

/** A user with the member it acts as. */
export interface UserMemberRow extends UserRow {
  member_name: string;
  teamspace_id: number;
  teamspace: string;
  role: Role;
  member_removed_at: string | null;
}

export const USER_SELECT = `SELECT u.*, m.name AS member_name, m.teamspace_id, t.name AS teamspace, m.role, m.removed_at AS member_removed_at
  FROM users u JOIN members m ON m.id = u.member_id JOIN teamspaces t ON t.id = m.teamspace_id`;

/** A user row to insert: a password hash, or an SSO issuer and subject. */
export interface NewUser {
  memberId: number;
  username: string;
  passwordHash: string | null;
  ssoIssuer: string | null;
  ssoSubject: string | null;
  now: string;
}

/** Users, their sessions (by id hash) and the one-time setup tokens. */
export class UserStore {
  constructor(private readonly db: Db) {}

  async count(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  }

  async insert(u: NewUser): Promise<number> {
    return Number(
      this.db
        .prepare('INSERT INTO users (member_id, username, password_hash, sso_issuer, sso_subject, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(u.memberId, u.username, u.passwordHash, u.ssoIssuer, u.ssoSubject, u.now).lastInsertRowid,
    );
  }

  async byId(id: number): Promise<UserMemberRow | null> {
    return (this.db.prepare(`${USER_SELECT} WHERE u.id = ?`).get(id) as UserMemberRow | undefined) ?? null;
  }

  async byUsername(username: string): Promise<UserMemberRow | null> {
    return (this.db.prepare(`${USER_SELECT} WHERE u.username = ?`).get(username) as UserMemberRow | undefined) ?? null;
  }

  async bySubject(issuer: string, subject: string): Promise<UserMemberRow | null> {
    return (this.db.prepare(`${USER_SELECT} WHERE u.sso_issuer = ? AND u.sso_subject = ?`).get(issuer, subject) as UserMemberRow | undefined) ?? null;
  }

  async list(): Promise<UserMemberRow[]> {
    return this.db.prepare(`${USER_SELECT} ORDER BY u.id`).all() as UserMemberRow[];
  }

  async signedIn(id: number, now: string): Promise<void> {
    this.db.prepare('UPDATE users SET last_sign_in_at = ? WHERE id = ?').run(now, id);
  }

  /** Makes the user act as another member (moved to another teamspace by its SSO groups). */
  async relink(id: number, memberId: number): Promise<void> {
    this.db.prepare('UPDATE users SET member_id = ? WHERE id = ?').run(memberId, id);
  }

  /**
   * Sets a password and ends the user's sessions in the same transaction, all but `keepSessionHash`
   * (the session that made the change; a session of another user is never one of them). Answers how many ended.
   */
  async setPassword(id: number, hash: string, keepSessionHash: string | null): Promise<number> {
    return this.db.transaction(() => {
      this.db.prepare('UPDATE users SET password_hash = ? WHERE id = ?').run(hash, id);
      return this.db.prepare('DELETE FROM sessions WHERE user_id = ? AND id_hash IS NOT ?').run(id, keepSessionHash).changes;
    })();
  }

  /** Disables (now) or enables (null) a user; disabling ends its sessions. */
  async setDisabled(id: number, at: string | null): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('UPDATE users SET disabled_at = ? WHERE id = ?').run(at, id);
      if (at) this.db.prepare('DELETE FROM sessions WHERE user_id = ?').run(id);
    })();
  }

  async insertSession(idHash: string, userId: number, csrfToken: string, now: string, expiresAt: string): Promise<void> {
    this.db
      .prepare('INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)')
      .run(idHash, userId, csrfToken, now, expiresAt);
  }

  async session(idHash: string, now: string): Promise<{ user_id: number; csrf_token: string; expires_at: string } | null> {
    return (
      (this.db.prepare('SELECT user_id, csrf_token, expires_at FROM sessions WHERE id_hash = ? AND expires_at > ?').get(idHash, now) as
        | { user_id: number; csrf_token: string; expires_at: string }
        | undefined) ?? null
    );
  }

  async deleteSession(idHash: string): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE id_hash = ?').run(idHash);
  }

  async pruneSessions(now: string): Promise<number> {
    return this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now).changes;
  }

  async insertSetupToken(hash: string, now: string, expiresAt: string): Promise<void> {
    this.db.prepare('INSERT INTO setup_tokens (token_hash, created_at, expires_at) VALUES (?, ?, ?)').run(hash, now, expiresAt);
  }

  async setupTokenCount(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM setup_tokens').get() as { n: number }).n;
  }

  /** Marks an unused, unexpired setup token used; false when there is none. */
  async useSetupToken(hash: string, now: string): Promise<boolean> {
    return this.db.prepare('UPDATE setup_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?').run(now, hash, now).changes > 0;
  }
}
