import type { Migration } from './migration.ts';

/**
 * People who sign in to the web console: local accounts (scrypt password hash) and single sign-on
 * accounts (OpenID Connect issuer + subject). A user acts as a member of one teamspace, with that
 * member's role; keys the user creates belong to that member. Sessions are stored by the hash of
 * their random id, with the CSRF token the page sends back on every change. `setup_tokens` holds
 * the one-time link printed at first start for creating the first owner.
 */
export const m014: Migration = {
  version: 14,
  name: 'users',
  up(db) {
    db.exec(`
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        member_id INTEGER NOT NULL UNIQUE REFERENCES members(id) ON DELETE CASCADE,
        username TEXT NOT NULL UNIQUE,
        password_hash TEXT,
        sso_issuer TEXT,
        sso_subject TEXT,
        created_at TEXT NOT NULL,
        last_sign_in_at TEXT,
        disabled_at TEXT,
        UNIQUE (sso_issuer, sso_subject)
      );
      CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf_token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX sessions_user ON sessions (user_id);
      CREATE TABLE setup_tokens (
        token_hash TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT
      ) WITHOUT ROWID;
    `);
  },
};
