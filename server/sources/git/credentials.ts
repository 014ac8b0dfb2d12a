import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Stores } from '../../store/stores.ts';
import { ApiError } from '../../../lib/errors.ts';

/**
 * Credentials per Git host: an HTTPS token (sent as the password of basic authentication, user
 * `oauth2` unless one is given: what GitLab, Gitea, GitHub and Bitbucket Server accept), a user and
 * password, or an SSH private key. The secret is encrypted with AES-256-GCM under the key of
 * STACKS_GIT_CREDENTIALS_KEY, bound to its host name and owner (additional authenticated data), and
 * is only ever decrypted to hand it to a git process; it is never logged, returned or audited.
 *
 * Credentials belong to the teamspace that stored them, or to the instance (docs/git.md#whose-credentials).
 * A repository is fetched with its teamspace's own credentials for the host; the instance's serve
 * only the repositories of the default teamspace, which administers the instance. So a teamspace
 * never sends, sees or changes a secret another teamspace (or the instance) stored.
 */
export type GitAuthKind = 'token' | 'basic' | 'ssh';

export interface GitAuth {
  kind: GitAuthKind;
  username: string | null;
  secret: string;
}

/** Whose credentials: a teamspace's (its id) or the instance's (null). */
export type CredentialOwner = number | null;

/** What `git-hosts list` shows: never the secret. */
export interface GitHostView {
  host: string;
  kind: GitAuthKind;
  username: string | null;
  /** Whose they are: the caller's teamspace's, or the instance's. */
  scope: 'teamspace' | 'instance';
  createdAt: string;
  updatedAt: string;
}

const FORMAT = 'v1';

/** The 32-byte key from STACKS_GIT_CREDENTIALS_KEY: 64 hex digits or base64 of 32 bytes. Null when the text is neither. */
export function parseCredentialsKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const b = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return b.length === 32 ? b : null;
  }
  return null;
}

/** `Host` or `host:port`, lower case: the key credentials are stored and looked up under. */
export function hostKey(host: string, port: number | null = null): string {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return port ? `${h}:${port}` : h;
}

/**
 * What a secret is bound to: its host and, for a teamspace's, that teamspace. A row copied to
 * another owner in the database then fails to decrypt instead of serving it. The instance's are
 * bound to the host alone, as every row was before owners existed (migration 019).
 */
export function sealContext(owner: CredentialOwner, host: string): string {
  return owner === null ? host : `teamspace:${owner}/${host}`;
}

export function encryptSecret(key: Buffer, context: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${FORMAT}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

export function decryptSecret(key: Buffer, context: string, sealed: string): string {
  const [format, data] = sealed.split(':', 2);
  if (format !== FORMAT || !data) throw new Error('unknown credential format');
  const raw = Buffer.from(data, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

export class GitCredentials {
  constructor(
    private readonly store: Stores['git'],
    /** Null when STACKS_GIT_CREDENTIALS_KEY is not set: public repositories only. */
    private readonly key: Buffer | null,
    /** The default teamspace: it administers the instance, so the instance's credentials serve its repositories. */
    private readonly instanceTeamspaceId: () => number,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  /** Stores or replaces `owner`'s credentials for a host; other owners' credentials for it are untouched. */
  async add(owner: CredentialOwner, input: { host: string; kind: GitAuthKind; username?: string | null; secret: string }): Promise<GitHostView> {
    const key = this.requireKey();
    const host = hostKey(input.host);
    if (!/^[a-z0-9.-]+(:\d{1,5})?$|^[0-9a-f:]+$/.test(host))
      throw new ApiError('validation_error', `host: "${input.host}" is not a host name (git.example.com or git.example.com:8443).`);
    if (input.kind === 'basic' && !input.username) throw new ApiError('validation_error', 'username is required for basic credentials.');
    if (input.kind === 'ssh' && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(input.secret))
      throw new ApiError('validation_error', 'An SSH credential is a private key file (-----BEGIN ... PRIVATE KEY-----).');
    const username = input.username?.trim() || (input.kind === 'token' ? 'oauth2' : input.kind === 'ssh' ? 'git' : null);
    await this.store.putHost(
      { teamspaceId: owner, host, kind: input.kind, username, secretEnc: encryptSecret(key, sealContext(owner, host), input.secret) },
      this.now(),
    );
    return (await this.list(owner)).find((h) => h.host === host)!;
  }

  /** `owner`'s credentials, without their secrets. */
  async list(owner: CredentialOwner): Promise<GitHostView[]> {
    return (await this.store.hosts(owner)).map((h) => ({
      host: h.host,
      kind: h.kind,
      username: h.username,
      scope: h.teamspaceId === null ? 'instance' : 'teamspace',
      createdAt: h.createdAt,
      updatedAt: h.updatedAt,
    }));
  }

  /** Forgets `owner`'s credentials for a host; another owner's are "not stored" here, exactly like absent ones. */
  async remove(owner: CredentialOwner, host: string): Promise<void> {
    if (!(await this.store.removeHost(owner, hostKey(host)))) throw new ApiError('not_found', `No credentials are stored for ${hostKey(host)}.`);
  }

  /**
   * The decrypted credentials a repository of `teamspaceId` (null: one from before libraries had
   * owners, the default teamspace's) is fetched with, or null: the teamspace's own for host:port,
   * then for the host; for the default teamspace's repositories, then the instance's the same way.
   * Never another teamspace's.
   */
  async forRepository(teamspaceId: number | null, host: string, port: number | null): Promise<GitAuth | null> {
    const team = teamspaceId ?? this.instanceTeamspaceId();
    const owners: CredentialOwner[] = team === this.instanceTeamspaceId() ? [team, null] : [team];
    const keys = port ? [hostKey(host, port), hostKey(host)] : [hostKey(host)];
    for (const owner of owners) {
      for (const k of keys) {
        const row = await this.store.host(owner, k);
        if (row) return { kind: row.kind, username: row.username, secret: this.open(owner, row.host, row.secretEnc) };
      }
    }
    return null;
  }

  private open(owner: CredentialOwner, host: string, sealed: string): string {
    const key = this.requireKey();
    try {
      return decryptSecret(key, sealContext(owner, host), sealed);
    } catch {
      throw new ApiError(
        'forbidden',
        `The stored credentials for ${host} cannot be decrypted: STACKS_GIT_CREDENTIALS_KEY changed since they were added; add them again.`,
      );
    }
  }

  private requireKey(): Buffer {
    if (!this.key)
      throw new ApiError(
        'validation_error',
        'Git host credentials need STACKS_GIT_CREDENTIALS_KEY (64 hex digits, e.g. from `openssl rand -hex 32`) in the configuration.',
      );
    return this.key;
  }
}
