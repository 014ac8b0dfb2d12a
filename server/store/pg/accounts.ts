import type { KeyScope, Role } from '../../../lib/model.ts';
import type { AccountStore, KeyPrincipalRow, KeyRow, MemberRow, TeamspaceRow } from '../accounts.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery, withTransaction } from './transaction.ts';

type TeamspaceFields = Parameters<AccountStore['updateTeamspace']>[1];

/** The columns updateTeamspace may set: the names are written into the SQL, so only these. */
const TEAMSPACE_FIELDS = new Set<string>(['plan', 'included_requests', 'spending_limit_cents', 'cents_per_extra_request', 'policy_json']);

/** Teamspaces, members and API keys on PostgreSQL, method for method SQLite's AccountStore (server/store/accounts.ts). */
export class PgAccountStore implements SameShape<AccountStore> {
  constructor(private readonly pool: PgPool) {}

  private async one<R extends object>(sql: string, args: unknown[]): Promise<R | null> {
    return (await pgQuery<R>(this.pool, sql, args)).rows[0] ?? null;
  }

  private async count(sql: string, args: unknown[] = []): Promise<number> {
    return (await pgQuery<{ n: number }>(this.pool, sql, args)).rows[0].n;
  }

  teamspaceCount(): Promise<number> {
    return this.count('SELECT count(*) AS n FROM teamspaces');
  }

  async createTeamspace(name: string, plan: TeamspaceRow['plan'], now: string): Promise<number> {
    return (await pgQuery<{ id: number }>(this.pool, 'INSERT INTO teamspaces (name, plan, created_at) VALUES ($1, $2, $3) RETURNING id', [name, plan, now]))
      .rows[0].id;
  }

  teamspace(id: number): Promise<TeamspaceRow | null> {
    return this.one('SELECT * FROM teamspaces WHERE id = $1', [id]);
  }

  teamspaceByName(name: string): Promise<TeamspaceRow | null> {
    return this.one('SELECT * FROM teamspaces WHERE name = $1', [name]);
  }

  firstTeamspace(): Promise<TeamspaceRow | null> {
    return this.one('SELECT * FROM teamspaces ORDER BY id LIMIT 1', []);
  }

  async updateTeamspace(id: number, fields: TeamspaceFields): Promise<void> {
    const keys = Object.keys(fields) as (keyof TeamspaceFields)[];
    if (keys.length === 0) return;
    for (const k of keys) if (!TEAMSPACE_FIELDS.has(k)) throw new Error(`not a teamspace setting: ${k}`);
    const sets = keys.map((k, i) => `${k} = $${i + 1}`).join(', ');
    await pgQuery(this.pool, `UPDATE teamspaces SET ${sets} WHERE id = $${keys.length + 1}`, [...keys.map((k) => fields[k]), id]);
  }

  async createMember(teamspaceId: number, name: string, role: Role, email: string | null, now: string): Promise<number> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      'INSERT INTO members (teamspace_id, name, email, role, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id',
      [teamspaceId, name, email, role, now],
    );
    return rows[0].id;
  }

  member(id: number): Promise<MemberRow | null> {
    return this.one('SELECT * FROM members WHERE id = $1', [id]);
  }

  memberByName(teamspaceId: number, name: string): Promise<MemberRow | null> {
    return this.one('SELECT * FROM members WHERE teamspace_id = $1 AND name = $2', [teamspaceId, name]);
  }

  async members(teamspaceId: number): Promise<MemberRow[]> {
    return (await pgQuery<MemberRow>(this.pool, 'SELECT * FROM members WHERE teamspace_id = $1 AND removed_at IS NULL ORDER BY id', [teamspaceId])).rows;
  }

  activeMemberCount(teamspaceId: number): Promise<number> {
    return this.count('SELECT count(*) AS n FROM members WHERE teamspace_id = $1 AND removed_at IS NULL', [teamspaceId]);
  }

  async setMemberRole(id: number, role: Role): Promise<void> {
    await pgQuery(this.pool, 'UPDATE members SET role = $1 WHERE id = $2', [role, id]);
  }

  /** Removing a member revokes its keys in the same transaction. */
  async removeMember(id: number, now: string): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      await client.query('UPDATE members SET removed_at = $1 WHERE id = $2', [now, id]);
      await client.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE member_id = $2', [now, id]);
    });
  }

  async insertKey(memberId: number, name: string, prefix: string, hash: string, now: string, scope: KeyScope = 'all'): Promise<number> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      'INSERT INTO api_keys (member_id, name, prefix, hash, created_at, scope) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
      [memberId, name, prefix, hash, now, scope],
    );
    return rows[0].id;
  }

  async keys(): Promise<(KeyRow & { member_name: string; role: Role; teamspace_id: number })[]> {
    const sql =
      'SELECT k.*, m.name AS member_name, m.role AS role, m.teamspace_id AS teamspace_id FROM api_keys k JOIN members m ON m.id = k.member_id ORDER BY k.id';
    return (await pgQuery<KeyRow & { member_name: string; role: Role; teamspace_id: number }>(this.pool, sql)).rows;
  }

  key(id: number): Promise<KeyRow | null> {
    return this.one('SELECT * FROM api_keys WHERE id = $1', [id]);
  }

  keyCount(): Promise<number> {
    return this.count('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL');
  }

  principalByHash(hash: string): Promise<KeyPrincipalRow | null> {
    return this.one(
      `SELECT k.id AS key_id, m.id AS member_id, m.name AS member_name, m.teamspace_id AS teamspace_id, m.role AS role, k.scope AS scope
       FROM api_keys k JOIN members m ON m.id = k.member_id
       WHERE k.hash = $1 AND k.revoked_at IS NULL AND m.removed_at IS NULL`,
      [hash],
    );
  }

  /**
   * Several nodes write a key's last use, each at most once a minute: the latest time wins whatever
   * order the writes arrive in (greatest() skips a null), where SQLite's single writer just sets it.
   */
  async touchKey(id: number, now: string): Promise<void> {
    await pgQuery(this.pool, 'UPDATE api_keys SET last_used_at = greatest(last_used_at, $1) WHERE id = $2', [now, id]);
  }

  async revokeKey(id: number, now: string): Promise<boolean> {
    return ((await pgQuery(this.pool, 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id])).rowCount ?? 0) > 0;
  }
}
