import crypto from 'node:crypto';
import type { Stores } from '../store/stores.ts';
import type { NewKey } from '../store/membership.ts';
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

/** A new key's secret (shown once) and what the store keeps of it. */
export function newKeySecret(name: string, scope: KeyScope): { key: string; stored: NewKey } {
  const key = KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
  return { key, stored: { name, prefix: key.slice(0, KEY_PREFIX.length + 6), hash: hashKey(key), scope } };
}

/** Teamspace bootstrap, members and keys. */
export class KeyService {
  private touched = new Map<number, number>();
  private defaultId: number | null = null;

  constructor(
    private readonly store: Stores,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  /**
   * Finds (or, on a fresh data dir, creates) the default teamspace; the composition root awaits it
   * once, so that defaultTeamspaceId() answers synchronously (the search path asks it per request).
   */
  async loadDefaultTeamspace(): Promise<number> {
    const t = await this.store.accounts.firstTeamspace();
    this.defaultId = t ? t.id : await this.createDefaultTeamspace();
    return this.defaultId;
  }

  private async createDefaultTeamspace(): Promise<number> {
    try {
      return await this.store.accounts.createTeamspace('default', 'enterprise', this.now());
    } catch (err) {
      // Another node of a cluster starting at the same moment made it first (the name is unique).
      const made = await this.store.accounts.firstTeamspace();
      if (!made) throw err;
      return made.id;
    }
  }

  /** The default teamspace (the first one; it is never deleted), known since loadDefaultTeamspace. */
  defaultTeamspaceId(): number {
    if (this.defaultId === null) throw new Error('the default teamspace is not loaded (KeyService.loadDefaultTeamspace)');
    return this.defaultId;
  }

  /** On a fresh data dir (no usable key), creates an owner member "admin" and a key for it. */
  async bootstrap(): Promise<CreatedKey | null> {
    if ((await this.store.accounts.keyCount()) > 0) return null;
    // Checked again inside the write: nodes of a cluster starting together print one key between them.
    const secret = newKeySecret(FIRST_KEY_NAME, 'all');
    const made = await this.store.membership.createFirstKey({
      ...secret.stored,
      teamspaceId: this.defaultTeamspaceId(),
      memberName: 'admin',
      role: 'owner',
      now: this.now(),
    });
    if (!made) return null;
    const { id, member } = made;
    return { id, key: secret.key, name: FIRST_KEY_NAME, memberId: member.id, memberName: member.name, role: member.role, scope: secret.stored.scope };
  }

  /** Whether a key is the one `bootstrap` printed at first start (the first key of the instance, by its name). */
  isFirstStartKey(k: Pick<KeyInfo, 'id' | 'name'>, all: readonly Pick<KeyInfo, 'id'>[]): boolean {
    return k.name === FIRST_KEY_NAME && k.id === Math.min(...all.map((x) => x.id));
  }

  /** Creates a key for a member (created with the given role when it does not exist; an existing member keeps its role): one store transaction. */
  async create(input: { name: string; memberName?: string; role?: Role; teamspaceId?: number; scope?: KeyScope }): Promise<CreatedKey> {
    const teamspaceId = input.teamspaceId ?? this.defaultTeamspaceId();
    const memberName = input.memberName ?? input.name;
    const secret = newKeySecret(input.name, input.scope ?? 'all');
    const { id, member } = await this.store.membership.createKey({ ...secret.stored, teamspaceId, memberName, role: input.role ?? 'member', now: this.now() });
    return { id, key: secret.key, name: input.name, memberId: member.id, memberName: member.name, role: member.role, scope: secret.stored.scope };
  }

  async list(): Promise<KeyInfo[]> {
    return (await this.store.accounts.keys()).map((k) => ({
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

  async revoke(id: number): Promise<void> {
    if (!(await this.store.accounts.key(id))) throw new ApiError('not_found', `No API key with id ${id}.`);
    await this.store.accounts.revokeKey(id, this.now());
  }

  /** Resolves a presented key; null when it is unknown or revoked. */
  async verify(key: string): Promise<Principal | null> {
    if (!key.startsWith(KEY_PREFIX)) return null;
    const row = await this.store.accounts.principalByHash(hashKey(key));
    if (!row) return null;
    // last_used_at is informational: write it at most once a minute per key, off the hot path.
    const nowMs = Date.now();
    if ((this.touched.get(row.key_id) ?? 0) < nowMs - 60_000) {
      this.touched.set(row.key_id, nowMs);
      // Informational: a failed write loses one timestamp, never the request.
      void this.store.accounts.touchKey(row.key_id, this.now()).catch(() => {});
    }
    return { keyId: row.key_id, memberId: row.member_id, memberName: row.member_name, teamspaceId: row.teamspace_id, role: row.role, scope: row.scope };
  }
}
