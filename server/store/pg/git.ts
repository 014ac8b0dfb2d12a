import { toHost, toRepo, type GitHostRow, type GitRepo, type GitStore, type GitVersionInfo, type HostRow, type RepoRow } from '../git.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery, withTransaction } from './transaction.ts';

/**
 * Git repositories, per-file blob hashes of built versions, and host credentials on PostgreSQL, method
 * for method SQLite's GitStore (server/store/git.ts). An owner is a teamspace id or null for the
 * instance, looked up as `coalesce(teamspace_id, 0)`, the expression of the unique index git_hosts_owner_host.
 */
export class PgGitStore implements SameShape<GitStore> {
  constructor(private readonly pool: PgPool) {}

  async repo(libraryId: string): Promise<GitRepo | null> {
    const { rows } = await pgQuery<RepoRow>(this.pool, 'SELECT * FROM git_repos WHERE library_id = $1', [libraryId]);
    return rows[0] ? toRepo(rows[0]) : null;
  }

  /** Records (or updates) a library's repository; the library row must exist. */
  async saveRepo(repo: Omit<GitRepo, 'updatedAt'>, now: string): Promise<void> {
    await pgQuery(
      this.pool,
      `INSERT INTO git_repos AS r (library_id, repo_url, host, branch, options_json, last_commit, last_job_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (library_id) DO UPDATE SET repo_url = excluded.repo_url, host = excluded.host, branch = excluded.branch, options_json = excluded.options_json,
         last_commit = coalesce(excluded.last_commit, r.last_commit), last_job_id = coalesce(excluded.last_job_id, r.last_job_id), updated_at = excluded.updated_at`,
      [repo.libraryId, repo.repoUrl, repo.host, repo.branch, JSON.stringify(repo.options), repo.lastCommit, repo.lastJobId, now],
    );
  }

  /** The version a commit built and the blob hash of each file it indexed, replaced whole in one transaction. */
  async saveVersionFiles(info: GitVersionInfo, files: Map<string, string>): Promise<void> {
    await withTransaction(this.pool, async () => {
      // SQLite's INSERT OR REPLACE: the row of this version, whatever it held.
      await pgQuery(
        this.pool,
        `INSERT INTO git_versions (version_id, ref, commit_sha, settings_hash) VALUES ($1, $2, $3, $4)
         ON CONFLICT (version_id) DO UPDATE SET ref = excluded.ref, commit_sha = excluded.commit_sha, settings_hash = excluded.settings_hash`,
        [info.versionId, info.ref, info.commit, info.settingsHash],
      );
      await pgQuery(this.pool, 'DELETE FROM git_files WHERE version_id = $1', [info.versionId]);
      if (files.size === 0) return;
      // One statement for all files (a repository indexes thousands): each column an array.
      await pgQuery(this.pool, 'INSERT INTO git_files (version_id, path, blob) SELECT $1, * FROM unnest($2::text[], $3::text[])', [
        info.versionId,
        [...files.keys()],
        [...files.values()],
      ]);
    });
  }

  async versionInfo(versionId: number): Promise<GitVersionInfo | null> {
    const { rows } = await pgQuery<{ version_id: number; ref: string; commit_sha: string; settings_hash: string }>(
      this.pool,
      'SELECT version_id, ref, commit_sha, settings_hash FROM git_versions WHERE version_id = $1',
      [versionId],
    );
    const r = rows[0];
    return r ? { versionId: r.version_id, ref: r.ref, commit: r.commit_sha, settingsHash: r.settings_hash } : null;
  }

  /** path -> blob hash, in path order (SQLite reads them from its (version_id, path) key). */
  async files(versionId: number): Promise<Map<string, string>> {
    const { rows } = await pgQuery<{ path: string; blob: string }>(
      this.pool,
      'SELECT path, blob FROM git_files WHERE version_id = $1 ORDER BY path COLLATE "C"',
      [versionId],
    );
    return new Map(rows.map((r) => [r.path, r.blob]));
  }

  async hosts(teamspaceId: number | null): Promise<GitHostRow[]> {
    const { rows } = await pgQuery<HostRow>(this.pool, 'SELECT * FROM git_hosts WHERE coalesce(teamspace_id, 0) = $1 ORDER BY host COLLATE "C"', [
      teamspaceId ?? 0,
    ]);
    return rows.map(toHost);
  }

  async host(teamspaceId: number | null, host: string): Promise<GitHostRow | null> {
    const { rows } = await pgQuery<HostRow>(this.pool, 'SELECT * FROM git_hosts WHERE coalesce(teamspace_id, 0) = $1 AND host = $2', [teamspaceId ?? 0, host]);
    return rows[0] ? toHost(rows[0]) : null;
  }

  /** Stores or replaces one owner's credentials for a host; another owner's row for the same host is left alone. */
  async putHost(row: Omit<GitHostRow, 'createdAt' | 'updatedAt'>, now: string): Promise<void> {
    await pgQuery(
      this.pool,
      `INSERT INTO git_hosts (teamspace_id, host, kind, username, secret_enc, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT ((coalesce(teamspace_id, 0)), host) DO UPDATE SET kind = excluded.kind, username = excluded.username, secret_enc = excluded.secret_enc,
         updated_at = excluded.updated_at`,
      [row.teamspaceId, row.host, row.kind, row.username, row.secretEnc, now],
    );
  }

  async removeHost(teamspaceId: number | null, host: string): Promise<boolean> {
    const r = await pgQuery(this.pool, 'DELETE FROM git_hosts WHERE coalesce(teamspace_id, 0) = $1 AND host = $2', [teamspaceId ?? 0, host]);
    return (r.rowCount ?? 0) > 0;
  }
}
