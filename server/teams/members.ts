import type { Store } from '../store/index.ts';
import type { TeamStore } from '../store/teams.ts';
import type { KeyService, CreatedKey, KeyInfo } from '../auth/keys.ts';
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
    private readonly store: Store,
    private readonly teams: TeamStore,
    private readonly keys: KeyService,
    private readonly license: LicenseService,
    private readonly now: () => string,
  ) {}

  list(teamspaceId: number): MemberView[] {
    return this.teams.people(teamspaceId).map((m) => ({ id: m.id, name: m.name, email: m.email, role: m.role, keys: m.key_count, createdAt: m.created_at }));
  }

  maxMembers(): number | null {
    return this.license.status().license?.maxMembers ?? null;
  }

  /** Invites a member; with `createKey` (default) an API key for it is created and returned once. */
  add(
    teamspaceId: number,
    actor: Actor,
    input: { name: string; email?: string | null; role?: Role; createKey?: boolean },
  ): { member: MemberView; key: CreatedKey | null } {
    const role = input.role ?? 'member';
    const name = input.name.trim();
    if (!MEMBER_NAME.test(name) || name === ANONYMOUS_MEMBER)
      throw new ApiError('validation_error', 'name: 1-100 letters, digits, spaces or . _ @ + -, starting with a letter or digit.');
    if (role === 'owner' && actor !== 'owner' && actor !== 'operator') throw new ApiError('forbidden', 'Only an owner can add another owner.');
    const existing = this.store.accounts.memberByName(teamspaceId, name);
    if (existing && !existing.removed_at) throw new ApiError('conflict', `A member named "${name}" already exists.`);
    const max = this.maxMembers();
    if (max !== null && this.teams.seatCount() >= max) {
      throw new ApiError('member_limit_reached', `The license allows ${max} members and all are taken; remove a member or install a license with more.`);
    }
    if (existing) this.teams.renameMember(existing.id, `${existing.name} (removed #${existing.id})`);
    const id = this.store.accounts.createMember(teamspaceId, name, role, input.email ?? null, this.now());
    const key = input.createKey === false ? null : this.keys.create({ name: `${name} key`, memberName: name, teamspaceId });
    return { member: this.get(teamspaceId, id), key };
  }

  get(teamspaceId: number, id: number): MemberView {
    const m = this.list(teamspaceId).find((x) => x.id === id);
    if (!m) throw new ApiError('not_found', `No member with id ${id} in this teamspace.`);
    return m;
  }

  byName(teamspaceId: number, name: string): MemberView {
    const m = this.list(teamspaceId).find((x) => x.name === name);
    if (!m) throw new ApiError('not_found', `No member named "${name}" in this teamspace.`);
    return m;
  }

  setRole(teamspaceId: number, actor: Actor, id: number, role: Role): MemberView {
    const m = this.get(teamspaceId, id);
    if ((m.role === 'owner' || role === 'owner') && actor !== 'owner' && actor !== 'operator')
      throw new ApiError('forbidden', 'Only an owner can grant or change the owner role.');
    if (m.role === 'owner' && role !== 'owner' && this.teams.ownerCount(teamspaceId) <= 1)
      throw new ApiError('conflict', 'The last owner cannot be demoted; make another member owner first.');
    this.store.accounts.setMemberRole(id, role);
    return this.get(teamspaceId, id);
  }

  /** Removes a member and revokes its keys. */
  remove(teamspaceId: number, actor: Actor, id: number): void {
    const m = this.get(teamspaceId, id);
    if (m.role === 'owner' && actor !== 'owner' && actor !== 'operator') throw new ApiError('forbidden', 'Only an owner can remove an owner.');
    if (m.role === 'owner' && this.teams.ownerCount(teamspaceId) <= 1) throw new ApiError('conflict', 'The last owner cannot be removed.');
    this.store.accounts.removeMember(id, this.now());
  }

  // ---- keys ----

  /** Every key of the instance, all teamspaces (what the operator on the box lists). */
  allKeys(): KeyInfo[] {
    return this.keys.list();
  }

  listKeys(teamspaceId: number, onlyMember?: number): KeyInfo[] {
    return this.keys.list().filter((k) => k.teamspaceId === teamspaceId && (onlyMember === undefined || k.memberId === onlyMember));
  }

  /** A key acts as its member, so only an owner (or the operator) may create or revoke an owner's keys. */
  createKey(teamspaceId: number, actor: Actor, memberId: number, name: string, scope: KeyScope = 'all'): CreatedKey {
    const m = this.get(teamspaceId, memberId);
    if (m.role === 'owner' && actor !== 'owner' && actor !== 'operator') throw new ApiError('forbidden', 'Only an owner can create keys for an owner.');
    return this.keys.create({ name, memberName: m.name, teamspaceId, scope });
  }

  revokeKey(teamspaceId: number, actor: Actor, id: number, onlyMember?: number): void {
    const k = this.listKeys(teamspaceId, onlyMember).find((x) => x.id === id);
    if (!k) throw new ApiError('not_found', `No API key with id ${id} that you may revoke.`);
    if (k.role === 'owner' && onlyMember === undefined && actor !== 'owner' && actor !== 'operator')
      throw new ApiError('forbidden', "Only an owner can revoke an owner's keys.");
    this.keys.revoke(id);
  }
}
