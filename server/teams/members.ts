import type { Stores } from '../store/stores.ts';
import { newKeySecret, type KeyService, type CreatedKey, type KeyInfo } from '../auth/keys.ts';
import type { LicenseService } from '../license/license.ts';
import type { KeyScope, Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { ANONYMOUS_MEMBER } from './usage.ts';

export interface MemberView {
  id: number;
  name: string;
  email: string | null;
  role: Role;
  keys: number;
  createdAt: string;
}

/** Who performs a change: a member's role, or 'operator' for the CLI on the box (full rights). */
export type Actor = Role | 'operator';

const MEMBER_NAME = /^[\p{L}\p{N}][\p{L}\p{N} ._@+-]{0,99}$/u;

/**
 * Members and their keys. Owners and admins manage members and keys; only an owner (or the
 * operator) grants, changes or removes the owner role, and the last owner cannot be removed or
 * demoted. The license's maxMembers caps active members of the installation, all teamspaces
 * together (the synthetic anonymous members excluded).
 */
export class MemberService {
  constructor(
    private readonly store: Stores,
    private readonly teams: Stores['teams'],
    private readonly keys: KeyService,
    private readonly license: LicenseService,
    private readonly now: () => string,
  ) {}

  async list(teamspaceId: number): Promise<MemberView[]> {
    return (await this.teams.people(teamspaceId)).map((m) => ({
      id: m.id,
      name: m.name,
      email: m.email,
      role: m.role,
      keys: m.key_count,
      createdAt: m.created_at,
    }));
  }

  maxMembers(): number | null {
    return this.license.status().license?.maxMembers ?? null;
  }

  /** Invites a member; with `createKey` (default) an API key for it is created and returned once. */
  async add(
    teamspaceId: number,
    actor: Actor,
    input: { name: string; email?: string | null; role?: Role; createKey?: boolean },
  ): Promise<{ member: MemberView; key: CreatedKey | null }> {
    const role = input.role ?? 'member';
    const name = this.checkedName(input.name);
    if (role === 'owner' && actor !== 'owner' && actor !== 'operator') throw new ApiError('forbidden', 'Only an owner can add another owner.');
    // The name, the seats and the insert are one store transaction; so is the key with them.
    const secret = input.createKey === false ? null : newKeySecret(`${name} key`, 'all');
    const { memberId, keyId } = await this.store.membership.addMember(
      { teamspaceId, name, role, email: input.email ?? null, maxSeats: this.maxMembers(), now: this.now() },
      secret?.stored ?? null,
    );
    const member = await this.get(teamspaceId, memberId);
    const key =
      secret && keyId !== null
        ? { id: keyId, key: secret.key, name: `${name} key`, memberId, memberName: name, role: member.role, scope: secret.stored.scope }
        : null;
    return { member, key };
  }

  /** A member's name as given, checked (not the anonymous member's). */
  checkedName(raw: string): string {
    const name = raw.trim();
    if (!MEMBER_NAME.test(name) || name === ANONYMOUS_MEMBER)
      throw new ApiError('validation_error', 'name: 1-100 letters, digits, spaces or . _ @ + -, starting with a letter or digit.');
    return name;
  }

  async get(teamspaceId: number, id: number): Promise<MemberView> {
    const m = (await this.list(teamspaceId)).find((x) => x.id === id);
    if (!m) throw new ApiError('not_found', `No member with id ${id} in this teamspace.`);
    return m;
  }

  async byName(teamspaceId: number, name: string): Promise<MemberView> {
    const m = (await this.list(teamspaceId)).find((x) => x.name === name);
    if (!m) throw new ApiError('not_found', `No member named "${name}" in this teamspace.`);
    return m;
  }

  async setRole(teamspaceId: number, actor: Actor, id: number, role: Role): Promise<MemberView> {
    const m = await this.get(teamspaceId, id);
    if ((m.role === 'owner' || role === 'owner') && actor !== 'owner' && actor !== 'operator')
      throw new ApiError('forbidden', 'Only an owner can grant or change the owner role.');
    // The last-owner check is the store's, in the transaction that writes the role.
    await this.store.membership.setRole(id, role);
    return this.get(teamspaceId, id);
  }

  /** Removes a member and revokes its keys (never the last owner: checked in the same transaction). */
  async remove(teamspaceId: number, actor: Actor, id: number): Promise<void> {
    const m = await this.get(teamspaceId, id);
    if (m.role === 'owner' && actor !== 'owner' && actor !== 'operator') throw new ApiError('forbidden', 'Only an owner can remove an owner.');
    await this.store.membership.removeMember(id, this.now());
  }

  // ---- keys ----

  /** Every key of the instance, all teamspaces (what the operator on the box lists). */
  allKeys(): Promise<KeyInfo[]> {
    return this.keys.list();
  }

  async listKeys(teamspaceId: number, onlyMember?: number): Promise<KeyInfo[]> {
    return (await this.keys.list()).filter((k) => k.teamspaceId === teamspaceId && (onlyMember === undefined || k.memberId === onlyMember));
  }

  /** A key acts as its member, so only an owner (or the operator) may create or revoke an owner's keys. */
  async createKey(teamspaceId: number, actor: Actor, memberId: number, name: string, scope: KeyScope = 'all'): Promise<CreatedKey> {
    const m = await this.get(teamspaceId, memberId);
    if (m.role === 'owner' && actor !== 'owner' && actor !== 'operator') throw new ApiError('forbidden', 'Only an owner can create keys for an owner.');
    return this.keys.create({ name, memberName: m.name, teamspaceId, scope });
  }

  async revokeKey(teamspaceId: number, actor: Actor, id: number, onlyMember?: number): Promise<void> {
    const k = (await this.listKeys(teamspaceId, onlyMember)).find((x) => x.id === id);
    if (!k) throw new ApiError('not_found', `No API key with id ${id} that you may revoke.`);
    if (k.role === 'owner' && onlyMember === undefined && actor !== 'owner' && actor !== 'operator')
      throw new ApiError('forbidden', "Only an owner can revoke an owner's keys.");
    await this.keys.revoke(id);
  }
}
