import type { Db } from './db.ts';
import type { Role } from '../../lib/model.ts';

export interface InvitationRow {
  id: number;
  teamspace_id: number;
  teamspace: string;
  role: Role;
  username: string | null;
  email: string | null;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  user_id: number | null;
  revoked_at: string | null;
}

const SELECT = `SELECT i.id, i.teamspace_id, t.name AS teamspace, i.role, i.username, i.email, i.invited_by, i.created_at, i.expires_at, i.used_at, i.user_id, i.revoked_at
  FROM invitations i JOIN teamspaces t ON t.id = i.teamspace_id`;

/** Console invitations, found by the hash of their link's token (the token itself is never stored). */
export class InvitationStore {
  constructor(private readonly db: Db) {}

  async insert(i: {
    teamspaceId: number;
    role: Role;
    username: string | null;
    email: string | null;
    tokenHash: string;
    invitedBy: string | null;
    now: string;
    expiresAt: string;
  }): Promise<number> {
    return Number(
      this.db
        .prepare(
          'INSERT INTO invitations (teamspace_id, role, username, email, token_hash, invited_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(i.teamspaceId, i.role, i.username, i.email, i.tokenHash, i.invitedBy, i.now, i.expiresAt).lastInsertRowid,
    );
  }

  async byId(id: number): Promise<InvitationRow | null> {
    return (this.db.prepare(`${SELECT} WHERE i.id = ?`).get(id) as InvitationRow | undefined) ?? null;
  }

  async byTokenHash(hash: string): Promise<InvitationRow | null> {
    return (this.db.prepare(`${SELECT} WHERE i.token_hash = ?`).get(hash) as InvitationRow | undefined) ?? null;
  }

  /** The teamspace's invitations, newest first. */
  async list(teamspaceId: number, limit = 200): Promise<InvitationRow[]> {
    return this.db.prepare(`${SELECT} WHERE i.teamspace_id = ? ORDER BY i.id DESC LIMIT ?`).all(teamspaceId, limit) as InvitationRow[];
  }

  async count(teamspaceId: number): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM invitations WHERE teamspace_id = ?').get(teamspaceId) as { n: number }).n;
  }

  /**
   * Marks an open invitation used by `userId`; false when it was used, revoked or expired meanwhile
   * (one statement: two people opening the same link cannot both get an account).
   */
  async use(id: number, userId: number, now: string): Promise<boolean> {
    return (
      this.db
        .prepare('UPDATE invitations SET used_at = ?, user_id = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?')
        .run(now, userId, id, now).changes > 0
    );
  }

  /** Revokes an open invitation of the teamspace; false when there is none. */
  async revoke(id: number, teamspaceId: number, now: string): Promise<boolean> {
    return (
      this.db
        .prepare('UPDATE invitations SET revoked_at = ? WHERE id = ? AND teamspace_id = ? AND used_at IS NULL AND revoked_at IS NULL')
        .run(now, id, teamspaceId).changes > 0
    );
  }
}
