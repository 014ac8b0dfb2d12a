import { statementCache, type Db, type Statement } from './db.ts';

/** A library's repository and how it is indexed (docs/git.md). */
export interface GitRepo {
  libraryId: string;
  repoUrl: string;
  host: string;
  /** The branch its current documentation comes from (null: the remote's default branch). */
  branch: string | null;
  options: Record<string, unknown>;
  lastCommit: string | null;
  lastJobId: number | null;
  updatedAt: string;
}

/** One Git host's stored credentials; the secret stays encrypted here (server/sources/git/credentials.ts opens it). */
export interface GitHostRow {
  /** The teamspace that owns them; null: the instance's (migration 019). */
  teamspaceId: number | null;
  host: string;
  kind: 'token' | 'basic' | 'ssh';
  username: string | null;
  secretEnc: string;
  createdAt: string;
  updatedAt: string;
}

/** What a served version was built from: the ref, its commit, and the settings its snippets depend on. */
export interface GitVersionInfo {
  versionId: number;
  ref: string;
  commit: string;
  settingsHash: string;
}

export interface RepoRow {
  library_id: string;
  repo_url: string;
  host: string;
  branch: string | null;
  options_json: string;
  last_commit: string | null;
  last_job_id: number | null;
  updated_at: string;
}

export interface HostRow {
  teamspace_id: number | null;
  host: string;
  kind: GitHostRow['kind'];
  username: string | null;
  secret_enc: string;
  created_at: string;
  updated_at: string;
}

/** Git repositories, per-file blob hashes of built versions, and host credentials. */
export class GitStore {
  private readonly stmt: (sql: string) => Statement;

  constructor(private readonly db: Db) {
    this.stmt = statementCache(db);
  }

  async repo(libraryId: string): Promise<GitRepo | null> {
    const r = this.stmt('SELECT * FROM git_repos WHERE library_id = ?').get(libraryId) as RepoRow | undefined;
    return r ? toRepo(r) : null;
  }

  /** Records (or updates) a library's repository; the library row must exist. */
  async saveRepo(repo: Omit<GitRepo, 'updatedAt'>, now: string): Promise<void> {
    this.stmt(
      `INSERT INTO git_repos (library_id, repo_url, host, branch, options_json, last_commit, last_job_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (library_id) DO UPDATE SET repo_url = excluded.repo_url, host = excluded.host, branch = excluded.branch, options_json = excluded.options_json,
         last_commit = coalesce(excluded.last_commit, last_commit), last_job_id = coalesce(excluded.last_job_id, last_job_id), updated_at = excluded.updated_at`,
    ).run(repo.libraryId, repo.repoUrl, repo.host, repo.branch, JSON.stringify(repo.options), repo.lastCommit, repo.lastJobId, now);
  }

  /** The version a commit built, and the per-file blob hashes it indexed (one transaction with the swap is not needed: they describe a version row that dies with it). */
  async saveVersionFiles(info: GitVersionInfo, files: Map<string, string>): Promise<void> {
    this.db.transaction(() => {
      this.stmt('INSERT OR REPLACE INTO git_versions (version_id, ref, commit_sha, settings_hash) VALUES (?, ?, ?, ?)').run(
        info.versionId,
        info.ref,
        info.commit,
        info.settingsHash,
      );
      this.stmt('DELETE FROM git_files WHERE version_id = ?').run(info.versionId);
      const ins = this.stmt('INSERT INTO git_files (version_id, path, blob) VALUES (?, ?, ?)');
      for (const [path, blob] of files) ins.run(info.versionId, path, blob);
    })();
  }

  async versionInfo(versionId: number): Promise<GitVersionInfo | null> {
    const r = this.stmt('SELECT version_id, ref, commit_sha, settings_hash FROM git_versions WHERE version_id = ?').get(versionId) as
      | { version_id: number; ref: string; commit_sha: string; settings_hash: string }
      | undefined;
    return r ? { versionId: r.version_id, ref: r.ref, commit: r.commit_sha, settingsHash: r.settings_hash } : null;
  }

  /** path -> blob hash of the files a version indexed. */
  async files(versionId: number): Promise<Map<string, string>> {
    const rows = this.stmt('SELECT path, blob FROM git_files WHERE version_id = ?').all(versionId) as { path: string; blob: string }[];
    return new Map(rows.map((r) => [r.path, r.blob]));
  }

  // An owner is a teamspace id, or null for the instance; `coalesce(teamspace_id, 0) = ?` with 0 for
  // the instance is how the unique index git_hosts_owner_host is written, so lookups use it.

  /** The credentials one owner stores, by host. */
  async hosts(teamspaceId: number | null): Promise<GitHostRow[]> {
    return (this.stmt('SELECT * FROM git_hosts WHERE coalesce(teamspace_id, 0) = ? ORDER BY host').all(teamspaceId ?? 0) as HostRow[]).map(toHost);
  }

  async host(teamspaceId: number | null, host: string): Promise<GitHostRow | null> {
    const r = this.stmt('SELECT * FROM git_hosts WHERE coalesce(teamspace_id, 0) = ? AND host = ?').get(teamspaceId ?? 0, host) as HostRow | undefined;
    return r ? toHost(r) : null;
  }

  /** Stores or replaces one owner's credentials for a host; another owner's row for the same host is left alone. */
  async putHost(row: Omit<GitHostRow, 'createdAt' | 'updatedAt'>, now: string): Promise<void> {
    this.stmt(
      `INSERT INTO git_hosts (teamspace_id, host, kind, username, secret_enc, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (coalesce(teamspace_id, 0), host) DO UPDATE SET kind = excluded.kind, username = excluded.username, secret_enc = excluded.secret_enc, updated_at = excluded.updated_at`,
    ).run(row.teamspaceId, row.host, row.kind, row.username, row.secretEnc, now, now);
  }

  async removeHost(teamspaceId: number | null, host: string): Promise<boolean> {
    return this.stmt('DELETE FROM git_hosts WHERE coalesce(teamspace_id, 0) = ? AND host = ?').run(teamspaceId ?? 0, host).changes > 0;
  }
}

export function toRepo(r: RepoRow): GitRepo {
  return {
    libraryId: r.library_id,
    repoUrl: r.repo_url,
    host: r.host,
    branch: r.branch,
    options: JSON.parse(r.options_json) as Record<string, unknown>,
    lastCommit: r.last_commit,
    lastJobId: r.last_job_id,
    updatedAt: r.updated_at,
  };
}

export function toHost(r: HostRow): GitHostRow {
  return {
    teamspaceId: r.teamspace_id,
    host: r.host,
    kind: r.kind,
    username: r.username,
    secretEnc: r.secret_enc,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
