import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Stores } from '../store/stores.ts';
import type { UserMemberRow } from '../store/users.ts';

/** Console sessions last this long after sign-in. */
export const SESSION_TTL_MS = 12 * 3_600_000;
export const SESSION_COOKIE = 'stacks_session';

/** How a session id is stored: its hash, so a copy of the database opens no session. */
export const sessionIdHash = (id: string) => crypto.createHash('sha256').update(id).digest('hex');

export interface Session {
  user: UserMemberRow;
  csrfToken: string;
}

/**
 * Console sessions: a random id in a signed HTTP-only cookie, stored by its hash with the CSRF
 * token the page sends back (X-CSRF-Token) on every change. A disabled user or removed member has
 * no session.
 */
export class SessionService {
  constructor(
    private readonly store: Stores,
    private readonly usable: (u: UserMemberRow) => boolean,
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  async create(userId: number): Promise<{ id: string; csrfToken: string; expiresAt: Date }> {
    const id = crypto.randomBytes(32).toString('base64url');
    const csrfToken = crypto.randomBytes(24).toString('base64url');
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.ttlMs);
    await this.store.users.pruneSessions(now.toISOString());
    await this.store.users.insertSession(sessionIdHash(id), userId, csrfToken, now.toISOString(), expiresAt.toISOString());
    return { id, csrfToken, expiresAt };
  }

  async resolve(id: string): Promise<Session | null> {
    const row = await this.store.users.session(sessionIdHash(id), new Date().toISOString());
    if (!row) return null;
    const user = await this.store.users.byId(row.user_id);
    return user && this.usable(user) ? { user, csrfToken: row.csrf_token } : null;
  }

  async end(id: string): Promise<void> {
    await this.store.users.deleteSession(sessionIdHash(id));
  }
}

/** The secret that signs session cookies: `<dataDir>/session.secret`, made at first use (mode 0600). */
export function sessionSecret(dataDir: string): string {
  const file = path.join(dataDir, 'session.secret');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    const secret = crypto.randomBytes(32).toString('base64url');
    fs.mkdirSync(dataDir, { recursive: true });
    try {
      fs.writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
      return secret;
    } catch {
      // Another process wrote it first.
      return fs.readFileSync(file, 'utf8').trim();
    }
  }
}

/** The instance setting that holds the cookie secret when the state is in PostgreSQL. */
export const SESSION_SECRET_SETTING = 'session.secret';

/**
 * The secret that signs session cookies when nodes share one database (PostgreSQL): one per cluster,
 * in the instance settings, so that a cookie node A signed verifies on node B. The first node to start
 * stores it: the data dir's `session.secret` when it has one (a data dir moved from SQLite, whose
 * signed-in sessions then stay valid), else a new one; nodes starting together all get the one stored
 * first (SettingsStore.claim). Kept in the database, it still opens no session from a copy of it:
 * sessions are stored by their id's hash.
 */
export async function sharedSessionSecret(
  settings: { claim(name: string, value: string, now: string): Promise<string> | string },
  dataDir: string,
): Promise<string> {
  let own: string | null = null;
  try {
    own = fs.readFileSync(path.join(dataDir, 'session.secret'), 'utf8').trim() || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return settings.claim(SESSION_SECRET_SETTING, own ?? crypto.randomBytes(32).toString('base64url'), new Date().toISOString());
}
