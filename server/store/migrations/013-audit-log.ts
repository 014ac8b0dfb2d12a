import type { Migration } from './migration.ts';

/**
 * The audit log: who did what to which target, from where, and how it ended. Append-only (a
 * trigger refuses changing a written entry; only `count` and `last_at` grow, for refused
 * authentications aggregated per address and hour). Old entries are pruned after the retention.
 */
export const m013: Migration = {
  version: 13,
  name: 'audit-log',
  up(db) {
    db.exec(`
      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        last_at TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1,
        actor_kind TEXT NOT NULL CHECK (actor_kind IN ('key', 'user', 'operator', 'anonymous')),
        actor_key_id INTEGER,
        actor_name TEXT,
        teamspace_id INTEGER,
        action TEXT NOT NULL,
        target TEXT,
        source_ip TEXT,
        outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed')),
        detail TEXT
      );
      CREATE INDEX audit_log_at ON audit_log (at);
      CREATE INDEX audit_log_teamspace ON audit_log (teamspace_id, id);
      CREATE INDEX audit_log_refusals ON audit_log (action, source_ip, at);
      CREATE TRIGGER audit_log_append_only
        BEFORE UPDATE OF at, actor_kind, actor_key_id, actor_name, teamspace_id, action, target, source_ip, outcome, detail ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    `);
  },
};
