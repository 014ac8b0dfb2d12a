import type { Db } from './db.ts';
import type { KeyScope, Role } from '../../lib/model.ts';

export interface TeamspaceRow {
  id: number;
  name: string;
  plan: 'free' | 'pro' | 'enterprise' | 'payg';
  included_requests: number;
  spending_limit_cents: number | null;
  cents_per_extra_request: number;
  policy_json: string | null;
  created_at: string;
}

export interface MemberRow {
  id: number;
  teamspace_id: number;
  name: string;
  email: string | null;
  role: Role;
  created_at: string;
  removed_at: string | null;
}

export interface KeyRow {
  id: number;
  member_id: number;
  name: string;
  prefix: string;
  hash: string;
  scope: KeyScope;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface KeyPrincipalRow {
  key_id: number;
  member_id: number;
  member_name: string;
  teamspace_id: number;
  role: Role;
  scope: KeyScope;
}

/** Teamspaces, members and API keys (stored as hashes only). */
export class AccountStore {
  constructor(private readonly db: Db) {}

  async teamspaceCount(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM teamspaces').get() as { n: number }).n;
  }

  async createTeamspace(name: string, plan: TeamspaceRow['plan'], now: string): Promise<number> {
    return Number(this.db.prepare('INSERT INTO teamspaces (name, plan, created_at) VALUES (?, ?, ?)').run(name, plan, now).lastInsertRowid);
  }

  async teamspace(id: number): Promise<TeamspaceRow | null> {
    return (this.db.prepare('SELECT * FROM teamspaces WHERE id = ?').get(id) as TeamspaceRow | undefined) ?? null;
  }

  async teamspaceByName(name: string): Promise<TeamspaceRow | null> {
    return (this.db.prepare('SELECT * FROM teamspaces WHERE name = ?').get(name) as TeamspaceRow | undefined) ?? null;
  }

  async firstTeamspace(): Promise<TeamspaceRow | null> {
    return (this.db.prepare('SELECT * FROM teamspaces ORDER BY id LIMIT 1').get() as TeamspaceRow | undefined) ?? null;
  }

  async updateTeamspace(
    id: number,
    fields: Partial<Pick<TeamspaceRow, 'plan' | 'included_requests' | 'spending_limit_cents' | 'cents_per_extra_request' | 'policy_json'>>,
  ): Promise<void> {
    const keys = Object.keys(fields) as (keyof typeof fields)[];
    if (keys.length === 0) return;
    this.db.prepare(`UPDATE teamspaces SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`).run({ ...fields, id });
  }

  async createMember(teamspaceId: number, name: string, role: Role, email: string | null, now: string): Promise<number> {
    return Number(
      this.db.prepare('INSERT INTO members (teamspace_id, name, email, role, created_at) VALUES (?, ?, ?, ?, ?)').run(teamspaceId, name, email, role, now)
        .lastInsertRowid,
    );
  }

  async member(id: number): Promise<MemberRow | null> {
    return (this.db.prepare('SELECT * FROM members WHERE id = ?').get(id) as MemberRow | undefined) ?? null;
  }

  async memberByName(teamspaceId: number, name: string): Promise<MemberRow | null> {
    return (this.db.prepare('SELECT * FROM members WHERE teamspace_id = ? AND name = ?').get(teamspaceId, name) as MemberRow | undefined) ?? null;
  }

  async members(teamspaceId: number): Promise<MemberRow[]> {
    return this.db.prepare('SELECT * FROM members WHERE teamspace_id = ? AND removed_at IS NULL ORDER BY id').all(teamspaceId) as MemberRow[];
  }

  async activeMemberCount(teamspaceId: number): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM members WHERE teamspace_id = ? AND removed_at IS NULL').get(teamspaceId) as { n: number }).n;
  }

  async setMemberRole(id: number, role: Role): Promise<void> {
    this.db.prepare('UPDATE members SET role = ? WHERE id = ?').run(role, id);
  }

  /** Removing a member revokes its keys in the same transaction. */
  async removeMember(id: number, now: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('UPDATE members SET removed_at = ? WHERE id = ?').run(now, id);
      this.db.prepare('UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE member_id = ?').run(now, id);
    })();
  }

  async insertKey(memberId: number, name: string, prefix: string, hash: string, now: string, scope: KeyScope = 'all'): Promise<number> {
    return Number(
      this.db
        .prepare('INSERT INTO api_keys (member_id, name, prefix, hash, created_at, scope) VALUES (?, ?, ?, ?, ?, ?)')
        .run(memberId, name, prefix, hash, now, scope).lastInsertRowid,
    );
  }

  async keys(): Promise<(KeyRow & { member_name: string; role: Role; teamspace_id: number })[]> {
    return this.db
      .prepare(
        'SELECT k.*, m.name AS member_name, m.role AS role, m.teamspace_id AS teamspace_id FROM api_keys k JOIN members m ON m.id = k.member_id ORDER BY k.id',
      )
      .all() as (KeyRow & { member_name: string; role: Role; teamspace_id: number })[];
  }

  async key(id: number): Promise<KeyRow | null> {
    return (this.db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRow | undefined) ?? null;
  }

  async keyCount(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL').get() as { n: number }).n;
  }

  async principalByHash(hash: string): Promise<KeyPrincipalRow | null> {
    return (
      (this.db
        .prepare(
          `SELECT k.id AS key_id, m.id AS member_id, m.name AS member_name, m.teamspace_id AS teamspace_id, m.role AS role, k.scope AS scope
         FROM api_keys k JOIN members m ON m.id = k.member_id
         WHERE k.hash = ? AND k.revoked_at IS NULL AND m.removed_at IS NULL`,
        )
        .get(hash) as KeyPrincipalRow | undefined) ?? null
    );
  }

  async touchKey(id: number, now: string): Promise<void> {
    this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(now, id);
  }

  async revokeKey(id: number, now: string): Promise<boolean> {
    return this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id).changes > 0;
  }
}
