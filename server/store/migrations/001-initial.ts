import type { Migration } from './migration.ts';

// The statements keep their original indentation: SQLite stores each CREATE statement's text in sqlite_master.

/** Teamspaces, members and their API keys (and the meta table). */
const ACCOUNTS = `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

      CREATE TABLE teamspaces (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL DEFAULT 'enterprise' CHECK (plan IN ('free','pro','enterprise','payg')),
        included_requests INTEGER NOT NULL DEFAULT 0,
        spending_limit_cents INTEGER,
        cents_per_extra_request REAL NOT NULL DEFAULT 0,
        policy_json TEXT,
        created_at TEXT NOT NULL
      );

      CREATE TABLE members (
        id INTEGER PRIMARY KEY,
        teamspace_id INTEGER NOT NULL REFERENCES teamspaces(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        email TEXT,
        role TEXT NOT NULL CHECK (role IN ('owner','admin','member')),
        created_at TEXT NOT NULL,
        removed_at TEXT,
        UNIQUE (teamspace_id, name)
      );

      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
    `;

/** Libraries, their versions and snippets, and the full-text index. */
const LIBRARIES = `
      CREATE TABLE libraries (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        source_type TEXT NOT NULL,
        source_url TEXT,
        language TEXT NOT NULL DEFAULT 'en',
        branch TEXT,
        docs_repo_url TEXT,
        docs_site_url TEXT,
        trust_score REAL,
        verified INTEGER NOT NULL DEFAULT 0,
        stars INTEGER,
        license TEXT,
        teamspace_id INTEGER REFERENCES teamspaces(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE library_versions (
        id INTEGER PRIMARY KEY,
        library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        tag TEXT NOT NULL DEFAULT '',
        state TEXT NOT NULL CHECK (state IN ('building','ready','failed','retired')),
        is_current INTEGER NOT NULL DEFAULT 0,
        verified INTEGER NOT NULL DEFAULT 1,
        total_tokens INTEGER NOT NULL DEFAULT 0,
        total_snippets INTEGER NOT NULL DEFAULT 0,
        job_id INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX library_versions_current ON library_versions (library_id, tag) WHERE is_current = 1;
      CREATE INDEX library_versions_library ON library_versions (library_id, state);

      CREATE TABLE snippets (
        id INTEGER PRIMARY KEY,
        version_id INTEGER NOT NULL REFERENCES library_versions(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('code','info')),
        source_id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        language TEXT NOT NULL DEFAULT '',
        page_title TEXT NOT NULL DEFAULT '',
        breadcrumb TEXT NOT NULL DEFAULT '',
        content TEXT NOT NULL DEFAULT '',
        code_list_json TEXT,
        tokens INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        position INTEGER NOT NULL,
        is_dynamic INTEGER NOT NULL DEFAULT 0,
        source_file TEXT
      );
      CREATE INDEX snippets_version ON snippets (version_id, position);
      CREATE INDEX snippets_source ON snippets (version_id, source_id);

      -- Contentless: the text lives in snippets; 'scope' holds the token v<version_id> so that
      -- a query is restricted to one library version inside the index, not by a join afterwards.
      CREATE VIRTUAL TABLE snippet_fts USING fts5(
        scope, title, breadcrumb, description, code, content,
        content = '', contentless_delete = 1,
        tokenize = 'unicode61 remove_diacritics 2'
      );
    `;

/** The job queue, usage counters and rules. */
const JOBS_AND_USAGE = `
      CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('queued','running','succeeded','failed','cancelled')),
        library_id TEXT,
        payload_json TEXT NOT NULL DEFAULT '{}',
        progress_json TEXT NOT NULL DEFAULT '{}',
        error TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        member_id INTEGER REFERENCES members(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX jobs_state ON jobs (state, id);

      CREATE TABLE usage_daily (
        member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        teamspace_id INTEGER NOT NULL REFERENCES teamspaces(id) ON DELETE CASCADE,
        day TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (member_id, day)
      );
      CREATE INDEX usage_daily_teamspace ON usage_daily (teamspace_id, day);

      CREATE TABLE research_usage (
        member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        week TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (member_id, week)
      );

      CREATE TABLE rules (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('global','library_own','library_team')),
        teamspace_id INTEGER REFERENCES teamspaces(id) ON DELETE CASCADE,
        library_id TEXT,
        text TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `;

/**
 * The initial schema. Conventions: timestamps are ISO-8601 UTC text; JSON columns end in _json.
 * Library versions: tag '' is the library's current (default-branch) documentation; every
 * (library_id, tag) has at most one row with is_current = 1, the one readers serve. A new import
 * or crawl writes a 'building' row and swaps it in with one transaction, so readers never see a mix.
 */
export const m001: Migration = {
  version: 1,
  name: 'initial',
  up(db) {
    db.exec(ACCOUNTS);
    db.exec(LIBRARIES);
    db.exec(JOBS_AND_USAGE);
  },
};
