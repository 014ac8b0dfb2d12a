import type { Migration } from './migration.ts';

/**
 * Git repositories as a source (docs/git.md).
 *
 * - library_versions.kind: `docs` (what every version was) or `source`: the dynamic source-code
 *   index of a repository, a partition of its own that is never served on its own (is_current
 *   stays 0) and never listed; the docs version it belongs to points at it with
 *   source_version_id, and both are swapped in by one transaction.
 * - git_repos: where a library's repository is and how it is indexed (options, last commit).
 * - git_files: the blob hash of every file a served version indexed, so a refresh re-reads only
 *   the files whose blob changed; settings_hash says whether the old snippets are still valid.
 * - git_hosts: credentials per Git host, encrypted (AES-256-GCM) with STACKS_GIT_CREDENTIALS_KEY.
 */
export const m015: Migration = {
  version: 15,
  name: 'git-sources',
  up(db) {
    db.exec(`
      ALTER TABLE library_versions ADD COLUMN kind TEXT NOT NULL DEFAULT 'docs' CHECK (kind IN ('docs', 'source'));
      ALTER TABLE library_versions ADD COLUMN source_version_id INTEGER;
      CREATE TABLE git_repos (
        library_id TEXT PRIMARY KEY REFERENCES libraries(id) ON DELETE CASCADE,
        repo_url TEXT NOT NULL,
        host TEXT NOT NULL,
        branch TEXT,
        options_json TEXT NOT NULL DEFAULT '{}',
        last_commit TEXT,
        last_job_id INTEGER,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE git_versions (
        version_id INTEGER PRIMARY KEY REFERENCES library_versions(id) ON DELETE CASCADE,
        ref TEXT NOT NULL,
        commit_sha TEXT NOT NULL,
        settings_hash TEXT NOT NULL
      );
      CREATE TABLE git_files (
        version_id INTEGER NOT NULL REFERENCES library_versions(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        blob TEXT NOT NULL,
        PRIMARY KEY (version_id, path)
      ) WITHOUT ROWID;
      CREATE TABLE git_hosts (
        host TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('token', 'basic', 'ssh')),
        username TEXT,
        secret_enc TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `);
  },
};
