import type { Migration } from './migration.ts';

/**
 * Console invitations and the instance's own settings (issue 42).
 *
 * `invitations`: an owner or admin invites a person into their teamspace with a role; the invitee
 * opens a one-time link and chooses a password. As with the setup link, only the SHA-256 of the
 * link's token is kept, so a copy of the database (or a backup) opens nobody's account. A row is
 * used once (`used_at`, with the user it made) or revoked; expired rows stay for the record.
 *
 * `instance_settings`: what the instance's owner sets in the console rather than in the environment
 * (the public address); one row per name.
 */
export const m021: Migration = {
  version: 21,
  name: 'invitations-settings',
  up(db) {
    db.exec(`
      CREATE TABLE invitations (
        id INTEGER PRIMARY KEY,
        teamspace_id INTEGER NOT NULL REFERENCES teamspaces(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        username TEXT,
        email TEXT,
        token_hash TEXT NOT NULL UNIQUE,
        invited_by TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT,
        user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
        revoked_at TEXT
      );
      CREATE INDEX invitations_teamspace ON invitations (teamspace_id, created_at);
      CREATE TABLE instance_settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  },
};
