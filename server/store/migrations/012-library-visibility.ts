import type { Migration } from './migration.ts';

/**
 * Library visibility. Every library has an owner teamspace and a visibility: `teamspace` (its
 * teamspace and the teamspaces in library_grants) or `instance` (everyone allowed to search).
 * Libraries that no teamspace owned were public: they become `instance`, owned by the default
 * (first) teamspace, so nothing disappears on upgrade; libraries a teamspace owned stay private.
 * `access_rev` counts visibility, grant and title changes: the search catalogue's stamp sums it, so a
 * change made by another process (the CLI) is seen without touching `updated_at` (which the
 * "last updated" library filter reads).
 * Jobs get the teamspace they belong to (the submitter's, else the private library's), so one
 * teamspace never sees another's jobs.
 */
export const m012: Migration = {
  version: 12,
  name: 'library-visibility',
  up(db) {
    db.exec(`
      ALTER TABLE libraries ADD COLUMN visibility TEXT NOT NULL DEFAULT 'instance' CHECK (visibility IN ('teamspace', 'instance'));
      ALTER TABLE libraries ADD COLUMN access_rev INTEGER NOT NULL DEFAULT 0;
      UPDATE libraries SET visibility = 'teamspace' WHERE teamspace_id IS NOT NULL;
      UPDATE libraries SET teamspace_id = (SELECT min(id) FROM teamspaces) WHERE teamspace_id IS NULL;
      CREATE TABLE library_grants (
        library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        teamspace_id INTEGER NOT NULL REFERENCES teamspaces(id) ON DELETE CASCADE,
        PRIMARY KEY (library_id, teamspace_id)
      ) WITHOUT ROWID;
      ALTER TABLE jobs ADD COLUMN teamspace_id INTEGER REFERENCES teamspaces(id) ON DELETE CASCADE;
      UPDATE jobs SET teamspace_id = coalesce(
        (SELECT m.teamspace_id FROM members m WHERE m.id = jobs.member_id),
        (SELECT l.teamspace_id FROM libraries l WHERE l.id = jobs.library_id AND l.visibility = 'teamspace'));
      CREATE INDEX jobs_teamspace ON jobs (teamspace_id, id);
    `);
  },
};
