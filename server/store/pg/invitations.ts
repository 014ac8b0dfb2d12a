import type { InvitationRow, InvitationStore } from '../invitations.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery } from './transaction.ts';

const SELECT = `SELECT i.id, i.teamspace_id, t.name AS teamspace, i.role, i.username, i.email, i.invited_by, i.created_at, i.expires_at, i.used_at, i.user_id, i.revoked_at
  FROM invitations i JOIN teamspaces t ON t.id = i.teamspace_id`;

/** Console invitations on PostgreSQL, method for method SQLite's InvitationStore (server/store/invitations.ts). */
export class PgInvitationStore implements SameShape<InvitationStore> {
  constructor(private readonly pool: PgPool) {}

  async insert(i: Parameters<InvitationStore['insert']>[0]): Promise<number> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      `INSERT INTO invitations (teamspace_id, role, username, email, token_hash, invited_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [i.teamspaceId, i.role, i.username, i.email, i.tokenHash, i.invitedBy, i.now, i.expiresAt],
    );
    return rows[0].id;
  }

  async byId(id: number): Promise<InvitationRow | null> {
    return (await pgQuery<InvitationRow>(this.pool, `${SELECT} WHERE i.id = $1`, [id])).rows[0] ?? null;
  }

  async byTokenHash(hash: string): Promise<InvitationRow | null> {
    return (await pgQuery<InvitationRow>(this.pool, `${SELECT} WHERE i.token_hash = $1`, [hash])).rows[0] ?? null;
  }

  /** The teamspace's invitations, newest first. */
  async list(teamspaceId: number, limit = 200): Promise<InvitationRow[]> {
    return (await pgQuery<InvitationRow>(this.pool, `${SELECT} WHERE i.teamspace_id = $1 ORDER BY i.id DESC LIMIT $2`, [teamspaceId, limit])).rows;
  }

  async count(teamspaceId: number): Promise<number> {
    return (await pgQuery<{ n: number }>(this.pool, 'SELECT count(*) AS n FROM invitations WHERE teamspace_id = $1', [teamspaceId])).rows[0].n;
  }

  /** Marks an open invitation used by `userId`; one statement, so two people opening the same link cannot both get an account. */
  async use(id: number, userId: number, now: string): Promise<boolean> {
    const r = await pgQuery(
      this.pool,
      'UPDATE invitations SET used_at = $1, user_id = $2 WHERE id = $3 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $1',
      [now, userId, id],
    );
    return (r.rowCount ?? 0) > 0;
  }

  /** Revokes an open invitation of the teamspace; false when there is none. */
  async revoke(id: number, teamspaceId: number, now: string): Promise<boolean> {
    const r = await pgQuery(
      this.pool,
      'UPDATE invitations SET revoked_at = $1 WHERE id = $2 AND teamspace_id = $3 AND used_at IS NULL AND revoked_at IS NULL',
      [now, id, teamspaceId],
    );
    return (r.rowCount ?? 0) > 0;
  }
}
