import type { MemberRow, TeamspaceRow } from '../accounts.ts';
import { LAST_OWNER_DEMOTED, LAST_OWNER_REMOVED, usernameBase, type MembershipStore, type NewKey, type NewMember, type NewUser } from '../membership.ts';
import { USER_SELECT, type UserMemberRow } from '../users.ts';
import type { KeyScope, Role } from '../../../lib/model.ts';
import { ApiError } from '../../../lib/errors.ts';
import type { PgClient } from './transaction.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { withTransaction } from './transaction.ts';

/**
 * The advisory lock every change of people takes: SQLite's BEGIN IMMEDIATE makes a check (a free
 * seat, a free name, another owner) and the write it allows one step across processes; this lock
 * does it across nodes. Its own key (not teams.ts's): metering need not wait for people's changes.
 */
const MEMBERSHIP_LOCK = 0x5374_4d62; // "StMb"

/** Changes of people that span several rows on PostgreSQL, method for method SQLite's MembershipStore (server/store/membership.ts). */
export class PgMembershipStore implements SameShape<MembershipStore> {
  constructor(private readonly pool: PgPool) {}

  addMember(m: NewMember, key: NewKey | null = null): Promise<{ memberId: number; keyId: number | null }> {
    return this.locked(async (c) => {
      const memberId = await insertMember(c, m);
      return { memberId, keyId: key ? await insertKey(c, memberId, key, m.now) : null };
    });
  }

  createKey(k: NewKey & { teamspaceId: number; memberName: string; role: Role; now: string }): Promise<{ id: number; member: MemberRow }> {
    return this.locked((c) => keyFor(c, k));
  }

  /** SQLite's createFirstKey: under the membership lock, so nodes starting together make one key. */
  createFirstKey(k: NewKey & { teamspaceId: number; memberName: string; role: Role; now: string }): Promise<{ id: number; member: MemberRow } | null> {
    return this.locked(async (c) => ((await c.query('SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1')).rowCount ? null : await keyFor(c, k)));
  }

  createTeamspace(
    name: string,
    plan: TeamspaceRow['plan'],
    owner: Omit<NewMember, 'teamspaceId'>,
    key: NewKey,
  ): Promise<{ teamspaceId: number; memberId: number; keyId: number }> {
    return this.locked(async (c) => {
      if ((await c.query('SELECT 1 FROM teamspaces WHERE name = $1', [name])).rowCount)
        throw new ApiError('conflict', `A teamspace named "${name}" already exists.`);
      const teamspaceId = (
        await c.query<{ id: number }>('INSERT INTO teamspaces (name, plan, created_at) VALUES ($1, $2, $3) RETURNING id', [name, plan, owner.now])
      ).rows[0].id;
      const memberId = await insertMember(c, { ...owner, teamspaceId });
      return { teamspaceId, memberId, keyId: await insertKey(c, memberId, key, owner.now) };
    });
  }

  createUser(u: NewUser): Promise<number> {
    return this.locked(async (c) => {
      if (u.setupTokenHash !== undefined && !(await useSetupToken(c, u.setupTokenHash, u.now)))
        throw new ApiError('forbidden', 'This setup link is invalid, expired or was already used; create users with `stacks users create` on the server.');
      if (await userBy(c, 'u.username = $1', [u.username])) throw new ApiError('conflict', `A user named "${u.username}" already exists.`);
      const memberId = await insertMember(c, { ...u, name: await freeMemberName(c, u.teamspaceId, u.memberName) });
      const id = await insertUser(c, memberId, u);
      if (u.invitationId !== undefined) {
        const used = await c.query(
          'UPDATE invitations SET used_at = $1, user_id = $2 WHERE id = $3 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $1',
          [u.now, id, u.invitationId],
        );
        if (used.rowCount === 0) throw new ApiError('forbidden', 'This invitation link was already used; ask whoever invited you for a new one.');
      }
      return id;
    });
  }

  provisionSsoUser(u: NewUser & { sso: { issuer: string; subject: string } }): Promise<UserMemberRow> {
    return this.locked(async (c) => {
      const known = await userBy(c, 'u.sso_issuer = $1 AND u.sso_subject = $2', [u.sso.issuer, u.sso.subject]);
      if (known) {
        if (known.teamspace_id !== u.teamspaceId) {
          const memberId = await insertMember(c, { ...u, name: await freeMemberName(c, u.teamspaceId, known.username) });
          await c.query('UPDATE users SET member_id = $1 WHERE id = $2', [memberId, known.id]);
          await removeMemberRow(c, known.member_id, u.now);
        } else if (known.role !== u.role) await setRoleRow(c, known.member_id, u.role);
        return (await userBy(c, 'u.id = $1', [known.id]))!;
      }
      const username = await freeUsername(c, u.username);
      const memberId = await insertMember(c, { ...u, name: await freeMemberName(c, u.teamspaceId, username) });
      return (await userBy(c, 'u.id = $1', [await insertUser(c, memberId, { ...u, username })]))!;
    });
  }

  setRole(memberId: number, role: Role): Promise<void> {
    return this.locked((c) => setRoleRow(c, memberId, role));
  }

  removeMember(memberId: number, now: string): Promise<void> {
    return this.locked((c) => removeMemberRow(c, memberId, now));
  }

  private locked<T>(fn: (c: PgClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [MEMBERSHIP_LOCK]);
      return fn(c);
    });
  }
}

async function memberByName(c: PgClient, teamspaceId: number, name: string): Promise<MemberRow | undefined> {
  return (await c.query<MemberRow>('SELECT * FROM members WHERE teamspace_id = $1 AND name = $2', [teamspaceId, name])).rows[0];
}

async function createMemberRow(c: PgClient, teamspaceId: number, name: string, role: Role, email: string | null, now: string): Promise<number> {
  const { rows } = await c.query<{ id: number }>('INSERT INTO members (teamspace_id, name, email, role, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id', [
    teamspaceId,
    name,
    email,
    role,
    now,
  ]);
  return rows[0].id;
}

async function insertMember(c: PgClient, m: NewMember): Promise<number> {
  const existing = await memberByName(c, m.teamspaceId, m.name);
  if (existing && !existing.removed_at) throw new ApiError('conflict', `A member named "${m.name}" already exists.`);
  if (m.maxSeats !== null) {
    const seats = (await c.query<{ n: number }>('SELECT count(*) AS n FROM members WHERE removed_at IS NULL AND synthetic = 0')).rows[0].n;
    if (seats >= m.maxSeats)
      throw new ApiError('member_limit_reached', `The license allows ${m.maxSeats} members and all are taken; remove a member or install a license with more.`);
  }
  if (existing) await c.query('UPDATE members SET name = $1 WHERE id = $2', [`${existing.name} (removed #${existing.id})`, existing.id]);
  return createMemberRow(c, m.teamspaceId, m.name, m.role, m.email, m.now);
}

/** A key for a member found by name, or created with it (createKey's body). */
async function keyFor(
  c: PgClient,
  k: NewKey & { teamspaceId: number; memberName: string; role: Role; now: string },
): Promise<{ id: number; member: MemberRow }> {
  let member = await memberByName(c, k.teamspaceId, k.memberName);
  if (member?.removed_at) throw new ApiError('validation_error', `Member "${k.memberName}" was removed; choose another name.`);
  if (!member) {
    const id = await createMemberRow(c, k.teamspaceId, k.memberName, k.role, null, k.now);
    member = (await c.query<MemberRow>('SELECT * FROM members WHERE id = $1', [id])).rows[0];
  }
  return { id: await insertKey(c, member!.id, k, k.now), member: member! };
}

async function insertKey(c: PgClient, memberId: number, k: { name: string; prefix: string; hash: string; scope: KeyScope }, now: string): Promise<number> {
  const { rows } = await c.query<{ id: number }>(
    'INSERT INTO api_keys (member_id, name, prefix, hash, created_at, scope) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
    [memberId, k.name, k.prefix, k.hash, now, k.scope],
  );
  return rows[0].id;
}

async function insertUser(c: PgClient, memberId: number, u: Pick<NewUser, 'username' | 'passwordHash' | 'sso' | 'now'>): Promise<number> {
  const { rows } = await c.query<{ id: number }>(
    'INSERT INTO users (member_id, username, password_hash, sso_issuer, sso_subject, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
    [memberId, u.username, u.passwordHash, u.sso?.issuer ?? null, u.sso?.subject ?? null, u.now],
  );
  return rows[0].id;
}

async function userBy(c: PgClient, where: string, args: unknown[]): Promise<UserMemberRow | undefined> {
  return (await c.query<UserMemberRow>(`${USER_SELECT} WHERE ${where}`, args)).rows[0];
}

async function useSetupToken(c: PgClient, hash: string, now: string): Promise<boolean> {
  return ((await c.query('UPDATE setup_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1', [now, hash])).rowCount ?? 0) > 0;
}

async function freeMemberName(c: PgClient, teamspaceId: number, wanted: string): Promise<string> {
  for (let i = 1; ; i++) {
    const name = i === 1 ? wanted : `${wanted}-${i}`;
    if (!(await memberByName(c, teamspaceId, name))) return name;
  }
}

async function freeUsername(c: PgClient, wanted: string): Promise<string> {
  const base = usernameBase(wanted);
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base}-${i}`;
    if (!(await userBy(c, 'u.username = $1', [name]))) return name;
  }
}

async function roleOf(c: PgClient, memberId: number): Promise<Role | undefined> {
  return (await c.query<{ role: Role }>('SELECT role FROM members WHERE id = $1 AND removed_at IS NULL', [memberId])).rows[0]?.role;
}

async function otherOwners(c: PgClient, memberId: number): Promise<number> {
  const { rows } = await c.query<{ n: number }>(
    `SELECT count(*) AS n FROM members o JOIN members m ON m.teamspace_id = o.teamspace_id
     WHERE m.id = $1 AND o.id <> m.id AND o.removed_at IS NULL AND o.synthetic = 0 AND o.role = 'owner'`,
    [memberId],
  );
  return rows[0].n;
}

async function setRoleRow(c: PgClient, memberId: number, role: Role): Promise<void> {
  if ((await roleOf(c, memberId)) === 'owner' && role !== 'owner' && (await otherOwners(c, memberId)) === 0) throw new ApiError('conflict', LAST_OWNER_DEMOTED);
  await c.query('UPDATE members SET role = $1 WHERE id = $2', [role, memberId]);
}

async function removeMemberRow(c: PgClient, memberId: number, now: string): Promise<void> {
  if ((await roleOf(c, memberId)) === 'owner' && (await otherOwners(c, memberId)) === 0) throw new ApiError('conflict', LAST_OWNER_REMOVED);
  await c.query('UPDATE members SET removed_at = $1 WHERE id = $2', [now, memberId]);
  await c.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE member_id = $2', [now, memberId]);
}
