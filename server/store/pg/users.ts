import type { NewUser, UserMemberRow, UserStore } from '../users.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery, withTransaction } from './transaction.ts';

const USER_SELECT = `SELECT u.*, m.name AS member_name, m.teamspace_id, t.name AS teamspace, m.role, m.removed_at AS member_removed_at
  FROM users u JOIN members m ON m.id = u.member_id JOIN teamspaces t ON t.id = m.teamspace_id`;

type SessionRow = { user_id: number; csrf_token: string; expires_at: string };

/** Users, sessions and setup tokens on PostgreSQL, method for method SQLite's UserStore (server/store/users.ts). */
export class PgUserStore implements SameShape<UserStore> {
  constructor(private readonly pool: PgPool) {}

  private async user(where: string, args: unknown[]): Promise<UserMemberRow | null> {
    return (await pgQuery<UserMemberRow>(this.pool, `${USER_SELECT} WHERE ${where}`, args)).rows[0] ?? null;
  }

  private async changes(sql: string, args: unknown[]): Promise<number> {
    return (await pgQuery(this.pool, sql, args)).rowCount ?? 0;
  }

  async count(): Promise<number> {
    return (await pgQuery<{ n: number }>(this.pool, 'SELECT count(*) AS n FROM users')).rows[0].n;
  }

  async insert(u: NewUser): Promise<number> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      'INSERT INTO users (member_id, username, password_hash, sso_issuer, sso_subject, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
      [u.memberId, u.username, u.passwordHash, u.ssoIssuer, u.ssoSubject, u.now],
    );
    return rows[0].id;
  }

  byId(id: number): Promise<UserMemberRow | null> {
    return this.user('u.id = $1', [id]);
  }

  byUsername(username: string): Promise<UserMemberRow | null> {
    return this.user('u.username = $1', [username]);
  }

  bySubject(issuer: string, subject: string): Promise<UserMemberRow | null> {
    return this.user('u.sso_issuer = $1 AND u.sso_subject = $2', [issuer, subject]);
  }

  async list(): Promise<UserMemberRow[]> {
    return (await pgQuery<UserMemberRow>(this.pool, `${USER_SELECT} ORDER BY u.id`)).rows;
  }

  async signedIn(id: number, now: string): Promise<void> {
    await pgQuery(this.pool, 'UPDATE users SET last_sign_in_at = $1 WHERE id = $2', [now, id]);
  }

  /** Makes the user act as another member (moved to another teamspace by its SSO groups). */
  async relink(id: number, memberId: number): Promise<void> {
    await pgQuery(this.pool, 'UPDATE users SET member_id = $1 WHERE id = $2', [memberId, id]);
  }

  /** Sets a password and ends the user's sessions but `keepSessionHash`, in one transaction; how many ended. */
  setPassword(id: number, hash: string, keepSessionHash: string | null): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      await client.query('UPDATE users SET password_hash = $1 WHERE id = $2', [hash, id]);
      // IS DISTINCT FROM is SQLite's `IS NOT`: with no session to keep (null), every session ends.
      return (await client.query('DELETE FROM sessions WHERE user_id = $1 AND id_hash IS DISTINCT FROM $2', [id, keepSessionHash])).rowCount ?? 0;
    });
  }

  /** Disables (now) or enables (null) a user; disabling ends its sessions, in the same transaction. */
  async setDisabled(id: number, at: string | null): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      await client.query('UPDATE users SET disabled_at = $1 WHERE id = $2', [at, id]);
      if (at) await client.query('DELETE FROM sessions WHERE user_id = $1', [id]);
    });
  }

  async insertSession(idHash: string, userId: number, csrfToken: string, now: string, expiresAt: string): Promise<void> {
    await pgQuery(this.pool, 'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
      idHash,
      userId,
      csrfToken,
      now,
      expiresAt,
    ]);
  }

  async session(idHash: string, now: string): Promise<SessionRow | null> {
    const { rows } = await pgQuery<SessionRow>(this.pool, 'SELECT user_id, csrf_token, expires_at FROM sessions WHERE id_hash = $1 AND expires_at > $2', [
      idHash,
      now,
    ]);
    return rows[0] ?? null;
  }

  async deleteSession(idHash: string): Promise<void> {
    await pgQuery(this.pool, 'DELETE FROM sessions WHERE id_hash = $1', [idHash]);
  }

  pruneSessions(now: string): Promise<number> {
    return this.changes('DELETE FROM sessions WHERE expires_at <= $1', [now]);
  }

  async insertSetupToken(hash: string, now: string, expiresAt: string): Promise<void> {
    await pgQuery(this.pool, 'INSERT INTO setup_tokens (token_hash, created_at, expires_at) VALUES ($1, $2, $3)', [hash, now, expiresAt]);
  }

  async setupTokenCount(): Promise<number> {
    return (await pgQuery<{ n: number }>(this.pool, 'SELECT count(*) AS n FROM setup_tokens')).rows[0].n;
  }

  /** Marks an unused, unexpired setup token used; false when there is none (one statement: it works once, whichever node). */
  async useSetupToken(hash: string, now: string): Promise<boolean> {
    return (await this.changes('UPDATE setup_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1', [now, hash])) > 0;
  }
}
