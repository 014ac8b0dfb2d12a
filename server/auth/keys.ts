import crypto from 'node:crypto';
import type { Store } from '../store/index.ts';
import type { KeyScope, Principal, Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';

export const KEY_PREFIX = 'stk_';

/**
 * API keys: 32 random bytes after the stk_ prefix, shown once, stored as SHA-256 only
 * (a fast hash is enough for 256-bit random secrets; there is nothing to brute-force).
 */
export function hashKey(key: string): string {
  return crypto.createHash('sha256').update(key).digest('hex');
}

export interface CreatedKey {
  id: number;
  key: string;
  name: string;
  memberId: number;
  memberName: string;
  role: Role;
  scope: KeyScope;
}

export interface KeyInfo {
  id: number;
  name: string;
  prefix: string;
  memberId: number;
  memberName: string;
  role: Role;
  scope: KeyScope;
  teamspaceId: number;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const FIRST_KEY_NAME = 'first admin key';

/** Teamspace bootstrap, members and keys. */
export class KeyService {
  private touched = new Map<number, number>();

  constructor(
    private readonly store: Store,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  /** The default teamspace, created with the first start. */
  defaultTeamspaceId(): number {
    const t = this.store.accounts.firstTeamspace();
    if (t) return t.id;
    return this.store.accounts.createTeamspace('default', 'enterprise', this.now());
  }

  /** On a fresh data dir (no usable key), creates an owner member "admin" and a key for it. */
  bootstrap(): CreatedKey | null {
    if (this.store.accounts.keyCount() > 0) return null;
    return this.create({ name: FIRST_KEY_NAME, memberName: 'admin', role: 'owner' });
  }

  /** Whether a key is the one `bootstrap` printed at first start (the first key of the instance, by its name). */
  isFirstStartKey(k: Pick<KeyInfo, 'id' | 'name'>): boolean {
    return k.name === FIRST_KEY_NAME && k.id === Math.min(...this.list().map((x) => x.id));
  }

  /** Creates a key for a member (created with the given role when it does not exist; an existing member keeps its role). */
  create(input: { name: string; memberName?: string; role?: Role; teamspaceId?: number; scope?: KeyScope }): CreatedKey {
    const teamspaceId = input.teamspaceId ?? this.defaultTeamspaceId();
    const memberName = input.memberName ?? input.name;
    let member = this.store.accounts.memberByName(teamspaceId, memberName);
    if (member?.removed_at) throw new ApiError('validation_error', `Member "${memberName}" was removed; choose another name.`);
    if (!member) {
      const id = this.store.accounts.createMember(teamspaceId, memberName, input.role ?? 'member', null, this.now());
      member = this.store.accounts.member(id)!;
    }
    const key = KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
    const scope = input.scope ?? 'all';
    const id = this.store.accounts.insertKey(member.id, input.name, key.slice(0, KEY_PREFIX.length + 6), hashKey(key), this.now(), scope);
    return { id, key, name: input.name, memberId: member.id, memberName: member.name, role: member.role, scope };
  }

  list(): KeyInfo[] {
    return this.store.accounts.keys().map((k) => ({
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      memberId: k.member_id,
      memberName: k.member_name,
      role: k.role,
      scope: k.scope,
      teamspaceId: k.teamspace_id,
      createdAt: k.created_at,
      lastUsedAt: k.last_used_at,
      revokedAt: k.revoked_at,
    }));
  }

  revoke(id: number): void {
    if (!this.store.accounts.key(id)) throw new ApiError('not_found', `No API key with id ${id}.`);
    this.store.accounts.revokeKey(id, this.now());
  }

  /** Resolves a presented key; null when it is unknown or revoked. */
  verify(key: string): Principal | null {
    if (!key.startsWith(KEY_PREFIX)) return null;
    const row = this.store.accounts.principalByHash(hashKey(key));
    if (!row) return null;
    // last_used_at is informational: write it at most once a minute per key, off the hot path.
    const nowMs = Date.now();
    if ((this.touched.get(row.key_id) ?? 0) < nowMs - 60_000) {
      this.touched.set(row.key_id, nowMs);
      this.store.accounts.touchKey(row.key_id, this.now());
    }
    return { keyId: row.key_id, memberId: row.member_id, memberName: row.member_name, teamspaceId: row.teamspace_id, role: row.role, scope: row.scope };
  }
}
