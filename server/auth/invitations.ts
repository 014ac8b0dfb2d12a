import crypto from 'node:crypto';
import type { Stores } from '../store/stores.ts';
import type { InvitationRow } from '../store/invitations.ts';
import type { Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { checkUsername, type UserService, type UserView } from './users.ts';

export type InvitationState = 'open' | 'used' | 'revoked' | 'expired';

export interface InvitationView {
  id: number;
  teamspace: string;
  role: Role;
  /** The user name the invitee gets, or null: they choose it. */
  username: string | null;
  email: string | null;
  invitedBy: string | null;
  createdAt: string;
  expiresAt: string;
  state: InvitationState;
  usedAt: string | null;
}

/** A new invitation with its link: the only time the token exists outside the invitee's browser. */
export interface CreatedInvitation extends InvitationView {
  token: string;
  /** The console path the invitee opens (`/#/invite/<token>`). */
  path: string;
  /** `path` on the public address, or null when none is set (the caller puts its own origin in front). */
  url: string | null;
}

/** What the invitation page shows before the invitee chooses a password. */
export interface InvitationPreview {
  teamspace: string;
  role: Role;
  username: string | null;
  expiresAt: string;
}

export const INVITATION_DAYS_DEFAULT = 7;
const hash = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/**
 * Console invitations: an owner or admin invites a person into their teamspace with a role; the
 * person opens the one-time link, chooses a password (and a user name when none was given) and is
 * signed in. Like the setup link, the token is random (24 bytes), kept only as its SHA-256, works
 * once and expires. Who may invite whom is decided by the operation (server/operations/invitations.ts).
 */
export class InvitationService {
  constructor(
    private readonly store: Stores,
    private readonly users: Pick<UserService, 'create' | 'exists'>,
    private readonly publicUrl: () => Promise<string | null>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(input: {
    teamspaceId: number;
    role: Role;
    username?: string | null;
    email?: string | null;
    invitedBy: string | null;
    days?: number;
  }): Promise<CreatedInvitation> {
    const username = input.username ? checkUsername(input.username) : null;
    if (username && (await this.users.exists(username))) throw new ApiError('conflict', `A user named "${username}" already exists.`);
    const token = crypto.randomBytes(24).toString('base64url');
    const now = this.now();
    const expiresAt = new Date(now.getTime() + (input.days ?? INVITATION_DAYS_DEFAULT) * 86_400_000).toISOString();
    const id = await this.store.invitations.insert({
      teamspaceId: input.teamspaceId,
      role: input.role,
      username,
      email: input.email ?? null,
      tokenHash: hash(token),
      invitedBy: input.invitedBy,
      now: now.toISOString(),
      expiresAt,
    });
    const path = `/#/invite/${token}`;
    const base = await this.publicUrl();
    return { ...this.view((await this.store.invitations.byId(id))!), token, path, url: base ? `${base}${path}` : null };
  }

  async list(teamspaceId: number): Promise<InvitationView[]> {
    return (await this.store.invitations.list(teamspaceId)).map((r) => this.view(r));
  }

  /** Whether the teamspace ever invited anyone (the first-run checklist). */
  async any(teamspaceId: number): Promise<boolean> {
    return (await this.store.invitations.count(teamspaceId)) > 0;
  }

  async revoke(teamspaceId: number, id: number): Promise<InvitationView> {
    if (!(await this.store.invitations.revoke(id, teamspaceId, this.now().toISOString()))) {
      const row = await this.store.invitations.byId(id);
      if (!row || row.teamspace_id !== teamspaceId) throw new ApiError('not_found', `No invitation with id ${id} in this teamspace.`);
      throw new ApiError('conflict', `Invitation ${id} is ${this.view(row).state} and cannot be revoked.`);
    }
    return this.view((await this.store.invitations.byId(id))!);
  }

  /** The open invitation behind a link, for its page; refused with the reason a person can act on. */
  async preview(token: string): Promise<InvitationPreview> {
    const row = await this.open(token);
    return { teamspace: row.teamspace, role: row.role, username: row.username, expiresAt: row.expires_at };
  }

  /** Creates the invitee's account and uses the invitation up, in one transaction. */
  async accept(token: string, input: { username?: string; password: string }): Promise<UserView> {
    const row = await this.open(token);
    const username = row.username ?? input.username;
    if (!username) throw new ApiError('validation_error', 'username: choose a user name.');
    // The invitation is used up in the transaction that makes the user (used meanwhile: no account).
    return this.users.create({ username, password: input.password, teamspaceId: row.teamspace_id, role: row.role, invitationId: row.id });
  }

  private async open(token: string): Promise<InvitationRow> {
    const row = await this.store.invitations.byTokenHash(hash(token));
    if (!row) throw refused('is not valid');
    const state = this.view(row).state;
    if (state === 'used') throw refused('was already used');
    if (state === 'revoked') throw refused('was revoked');
    if (state === 'expired') throw refused(`expired on ${row.expires_at.slice(0, 10)}`);
    return row;
  }

  private view(r: InvitationRow): InvitationView {
    const state: InvitationState = r.used_at ? 'used' : r.revoked_at ? 'revoked' : Date.parse(r.expires_at) <= this.now().getTime() ? 'expired' : 'open';
    return {
      id: r.id,
      teamspace: r.teamspace,
      role: r.role,
      username: r.username,
      email: r.email,
      invitedBy: r.invited_by,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      state,
      usedAt: r.used_at,
    };
  }
}

function refused(why: string): ApiError {
  return new ApiError('forbidden', `This invitation link ${why}; ask whoever invited you for a new one.`);
}
