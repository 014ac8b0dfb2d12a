import type { Migration } from './migration.ts';

/**
 * Teamspace accounting. usage_daily (001) keeps the per-member, per-day history that
 * GET /api/v2/usage shows; the two monthly tables hold what the limits need in one primary-key
 * lookup each: a member's requests this month, and the teamspace's extra requests and spend
 * (priced when each request was served, so a later price change does not rewrite the bill).
 * members.synthetic marks the per-teamspace "(anonymous)" member that anonymous search is counted under;
 * it is not a person, so it is never listed or counted against the license's maxMembers.
 * A new teamspace gets its plan's included requests unless one was given (trigger below).
 */
export const m007: Migration = {
  version: 7,
  name: 'teamspaces',
  up(db) {
    db.exec(`
      ALTER TABLE members ADD COLUMN synthetic INTEGER NOT NULL DEFAULT 0;

      CREATE TABLE usage_member_monthly (
        member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        month TEXT NOT NULL,
        teamspace_id INTEGER NOT NULL REFERENCES teamspaces(id) ON DELETE CASCADE,
        requests INTEGER NOT NULL DEFAULT 0,
        extra_requests INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (member_id, month)
      );

      CREATE TABLE usage_teamspace_monthly (
        teamspace_id INTEGER NOT NULL REFERENCES teamspaces(id) ON DELETE CASCADE,
        month TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        extra_requests INTEGER NOT NULL DEFAULT 0,
        spend_cents REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (teamspace_id, month)
      );

      CREATE INDEX rules_teamspace ON rules (teamspace_id, kind);
      CREATE INDEX rules_library ON rules (library_id, kind);

      UPDATE teamspaces SET included_requests = CASE plan WHEN 'free' THEN 1000 WHEN 'pro' THEN 5000 WHEN 'enterprise' THEN 100000 ELSE 0 END
        WHERE included_requests = 0 AND plan != 'payg';

      CREATE TRIGGER teamspaces_default_included AFTER INSERT ON teamspaces
        WHEN NEW.included_requests = 0 AND NEW.plan != 'payg'
        BEGIN
          UPDATE teamspaces SET included_requests = CASE NEW.plan WHEN 'free' THEN 1000 WHEN 'pro' THEN 5000 ELSE 100000 END WHERE id = NEW.id;
        END;
    `);
  },
};
