import type { Migration } from './migration.ts';

/**
 * Git host credentials get an owner (docs/git.md#whose-credentials): the teamspace that stored them, or
 * the instance (teamspace_id NULL). Before, one row per host served every teamspace: a token one
 * teamspace stored was listed to, used for and replaceable by every other.
 *
 * Rows stored before are the instance's: nobody can tell which teamspace stored each (any owner or
 * admin could), so they go to the party that administers the instance (the operator and the
 * default teamspace's owners and admins) and are used only for the default teamspace's
 * repositories. Another teamspace that relied on one stores its own. Their ciphertext stays valid:
 * an instance row is sealed with the host name alone, as every row was.
 *
 * The table is rebuilt because the host stops being the primary key: each owner may hold one row
 * per host. NULL never equals NULL in a UNIQUE index, hence the coalesce (teamspace ids start at 1).
 */
export const m019: Migration = {
  version: 19,
  name: 'git-host-owner',
  up(db) {
    db.exec(`
      CREATE TABLE git_hosts_owned (
        id INTEGER PRIMARY KEY,
        teamspace_id INTEGER REFERENCES teamspaces(id) ON DELETE CASCADE,
        host TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('token', 'basic', 'ssh')),
        username TEXT,
        secret_enc TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      INSERT INTO git_hosts_owned (teamspace_id, host, kind, username, secret_enc, created_at, updated_at)
        SELECT NULL, host, kind, username, secret_enc, created_at, updated_at FROM git_hosts;
      DROP TABLE git_hosts;
      ALTER TABLE git_hosts_owned RENAME TO git_hosts;
      CREATE UNIQUE INDEX git_hosts_owner_host ON git_hosts (coalesce(teamspace_id, 0), host);
    `);
  },
};
