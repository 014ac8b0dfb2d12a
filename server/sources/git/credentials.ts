import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { GitStore } from '../../store/git.ts';
import { ApiError } from '../../../lib/errors.ts';

/**
 * Credentials per Git host: an HTTPS token (sent as the password of basic authentication, user
 * `oauth2` unless one is given: what GitLab, Gitea, GitHub and Bitbucket Server accept), a user and
 * password, or an SSH private key. The secret is encrypted with AES-256-GCM under the key of
 * STACKS_GIT_CREDENTIALS_KEY, bound to its host name (additional authenticated data), and is only
 * ever decrypted to hand it to a git process; it is never logged, returned or audited.
 */
export type GitAuthKind = 'token' | 'basic' | 'ssh';

export interface GitAuth {
  kind: GitAuthKind;
  username: string | null;
  secret: string;
}

/** What `git-hosts list` shows: never the secret. */
export interface GitHostView {
  host: string;
  kind: GitAuthKind;
  username: string | null;
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
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return port ? `${h}:${port}` : h;
}

export function encryptSecret(key: Buffer, host: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(host));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${FORMAT}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

export function decryptSecret(key: Buffer, host: string, sealed: string): string {
  const [format, data] = sealed.split(':', 2);
  if (format !== FORMAT || !data) throw new Error('unknown credential format');
  const raw = Buffer.from(data, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(host));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

export class GitCredentials {
  constructor(
    private readonly store: GitStore,
    /** Null when STACKS_GIT_CREDENTIALS_KEY is not set: public repositories only. */
    private readonly key: Buffer | null,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  add(input: { host: string; kind: GitAuthKind; username?: string | null; secret: string }): GitHostView {
    const key = this.requireKey();
    const host = hostKey(input.host);
    if (!/^[a-z0-9.-]+(:\d{1,5})?$|^[0-9a-f:]+$/.test(host)) throw new ApiError('validation_error', `host: "${input.host}" is not a host name (git.example.com or git.example.com:8443).`);
    if (input.kind === 'basic' && !input.username) throw new ApiError('validation_error', 'username is required for basic credentials.');
    if (input.kind === 'ssh' && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(input.secret)) throw new ApiError('validation_error', 'An SSH credential is a private key file (-----BEGIN ... PRIVATE KEY-----).');
    const username = input.username?.trim() || (input.kind === 'token' ? 'oauth2' : input.kind === 'ssh' ? 'git' : null);
    this.store.putHost({ host, kind: input.kind, username, secretEnc: encryptSecret(key, host, input.secret) }, this.now());
    return this.list().find((h) => h.host === host)!;
  }

  list(): GitHostView[] {
    return this.store.hosts().map((h) => ({ host: h.host, kind: h.kind, username: h.username, createdAt: h.createdAt, updatedAt: h.updatedAt }));
  }

  remove(host: string): void {
    if (!this.store.removeHost(hostKey(host))) throw new ApiError('not_found', `No credentials are stored for ${hostKey(host)}.`);
  }

  /** The decrypted credentials for a repository's host (host:port first, then the host alone), or null. */
  forHost(host: string, port: number | null): GitAuth | null {
    for (const k of port ? [hostKey(host, port), hostKey(host)] : [hostKey(host)]) {
      const row = this.store.host(k);
      if (!row) continue;
      const key = this.requireKey();
      let secret: string;
      try {
        secret = decryptSecret(key, row.host, row.secretEnc);
      } catch {
        throw new ApiError('forbidden', `The stored credentials for ${row.host} cannot be decrypted: STACKS_GIT_CREDENTIALS_KEY changed since they were added; add them again.`);
      }
      return { kind: row.kind, username: row.username, secret };
    }
    return null;
  }

  private requireKey(): Buffer {
    if (!this.key) throw new ApiError('validation_error', 'Git host credentials need STACKS_GIT_CREDENTIALS_KEY (64 hex digits, e.g. from `openssl rand -hex 32`) in the configuration.');
    return this.key;
  }
}
