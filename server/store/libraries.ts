import { statementCache, type Db, type Statement } from './db.ts';
import type { Library, LibraryMeta, LibraryVersion, LibraryVisibility, VersionState } from '../../lib/model.ts';

export interface LibraryRow {
  id: string;
  title: string;
  description: string;
  source_type: string;
  source_url: string | null;
  language: string;
  branch: string | null;
  docs_repo_url: string | null;
  docs_site_url: string | null;
  trust_score: number | null;
  verified: number;
  stars: number | null;
  license: string | null;
  teamspace_id: number | null;
  visibility: LibraryVisibility;
  /** Granted teamspace ids, comma-separated (from library_grants). */
  grants: string | null;
  created_at: string;
  updated_at: string;
}

/** A library row with its grants. */
const LIBRARY_SELECT = 'SELECT l.*, (SELECT group_concat(g.teamspace_id) FROM library_grants g WHERE g.library_id = l.id) AS grants FROM libraries l';

export interface VersionRow {
  id: number;
  library_id: string;
  tag: string;
  state: VersionState;
  is_current: number;
  verified: number;
  total_tokens: number;
  total_snippets: number;
  job_id: number | null;
  created_at: string;
  updated_at: string;
  kind: 'docs' | 'source';
  source_version_id: number | null;
}

/** What a version holds: documentation (served) or a repository's dynamic source-code index (reached through its docs version). */
export type VersionKind = VersionRow['kind'];

export function toLibrary(r: LibraryRow): Library {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    sourceType: r.source_type as Library['sourceType'],
    sourceUrl: r.source_url,
    language: r.language,
    branch: r.branch,
    docsRepoUrl: r.docs_repo_url,
    docsSiteUrl: r.docs_site_url,
    trustScore: r.trust_score,
    verified: r.verified === 1,
    stars: r.stars,
    license: r.license,
    teamspaceId: r.teamspace_id,
    visibility: r.visibility,
    grants: r.grants
      ? r.grants
          .split(',')
          .map(Number)
          .sort((a, b) => a - b)
      : [],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toVersion(r: VersionRow): LibraryVersion {
  return {
    id: r.id,
    libraryId: r.library_id,
    tag: r.tag,
    state: r.state,
    isCurrent: r.is_current === 1,
    verified: r.verified === 1,
    totalTokens: r.total_tokens,
    totalSnippets: r.total_snippets,
    jobId: r.job_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    dynamicVersionId: r.source_version_id,
  };
}

/** Snippet rows deleted per statement when a version is purged. */
const DELETE_CHUNK = 500;

/** Libraries and their versions. */
export class LibraryStore {
  /** Prepared once per SQL text: version and library lookups run on every search request. */
  private readonly stmt: (sql: string) => Statement;

  constructor(private readonly db: Db) {
    this.stmt = statementCache(db);
  }

  get(id: string): Library | null {
    const r = this.stmt(`${LIBRARY_SELECT} WHERE l.id = ?`).get(id) as LibraryRow | undefined;
    return r ? toLibrary(r) : null;
  }

  list(): Library[] {
    return (this.stmt(`${LIBRARY_SELECT} ORDER BY l.id`).all() as LibraryRow[]).map(toLibrary);
  }

  /**
   * Inserts the library, or updates its metadata when it exists. A new library takes the given
   * owner and visibility (default: `instance` when no teamspace owns it, else `teamspace`); an
   * existing one keeps its own, which only setAccess changes.
   */
  async upsert(meta: LibraryMeta, now: string): Promise<void> {
    this.upsertRow(meta, now);
  }

  private upsertRow(meta: LibraryMeta, now: string): void {
    this.db
      .prepare(
        `INSERT INTO libraries (id, title, description, source_type, source_url, language, branch, docs_repo_url, docs_site_url,
           trust_score, verified, stars, license, teamspace_id, visibility, created_at, updated_at)
         VALUES (@id, @title, @description, @sourceType, @sourceUrl, @language, @branch, @docsRepoUrl, @docsSiteUrl,
           @trustScore, @verified, @stars, @license, @teamspaceId, @visibility, @now, @now)
         ON CONFLICT (id) DO UPDATE SET title = excluded.title, description = excluded.description, source_type = excluded.source_type,
           source_url = coalesce(excluded.source_url, source_url), language = excluded.language, branch = coalesce(excluded.branch, branch),
           docs_repo_url = coalesce(excluded.docs_repo_url, docs_repo_url), docs_site_url = coalesce(excluded.docs_site_url, docs_site_url),
           trust_score = coalesce(excluded.trust_score, trust_score), verified = max(excluded.verified, verified),
           stars = coalesce(excluded.stars, stars), license = coalesce(excluded.license, license),
           teamspace_id = coalesce(teamspace_id, excluded.teamspace_id), updated_at = excluded.updated_at`,
      )
      .run({
        id: meta.id,
        title: meta.title,
        description: meta.description ?? '',
        sourceType: meta.sourceType,
        sourceUrl: meta.sourceUrl ?? null,
        language: meta.language ?? 'en',
        branch: meta.branch ?? null,
        docsRepoUrl: meta.docsRepoUrl ?? null,
        docsSiteUrl: meta.docsSiteUrl ?? null,
        trustScore: meta.trustScore ?? null,
        verified: meta.verified ? 1 : 0,
        stars: meta.stars ?? null,
        license: meta.license ?? null,
        teamspaceId: meta.teamspaceId ?? null,
        visibility: meta.visibility ?? (meta.teamspaceId == null ? 'instance' : 'teamspace'),
        now,
      });
  }

  /** Renames or re-describes a library (what lists and name matching show); false when it does not exist. */
  async setMeta(id: string, meta: { title?: string; description?: string }): Promise<boolean> {
    return (
      this.db
        .prepare('UPDATE libraries SET title = coalesce(?, title), description = coalesce(?, description), access_rev = access_rev + 1 WHERE id = ?')
        .run(meta.title ?? null, meta.description ?? null, id).changes > 0
    );
  }

  /** Sets trust metadata (undefined: unchanged; null: cleared); false when the library does not exist. */
  async setTrust(id: string, t: { stars?: number | null; trustScore?: number | null; verified?: boolean; license?: string | null }): Promise<boolean> {
    const fields: [string, unknown][] = [];
    if (t.stars !== undefined) fields.push(['stars', t.stars]);
    if (t.trustScore !== undefined) fields.push(['trust_score', t.trustScore]);
    if (t.verified !== undefined) fields.push(['verified', t.verified ? 1 : 0]);
    if (t.license !== undefined) fields.push(['license', t.license]);
    const sets = fields.map(([c]) => `${c} = ?`);
    const args = fields.map(([, v]) => v);
    if (!sets.length) return this.get(id) !== null;
    // access_rev: the search catalogue (and the policy filters on stars, trust and license) must see the change.
    return this.db.prepare(`UPDATE libraries SET ${sets.join(', ')}, access_rev = access_rev + 1 WHERE id = ?`).run(...args, id).changes > 0;
  }

  /** Sets who may read a library: its visibility and the teamspaces granted (replaced whole). False when it does not exist. */
  async setAccess(id: string, visibility: LibraryVisibility, grants: number[]): Promise<boolean> {
    return this.db.transaction(() => {
      // A library that no teamspace owned yet is now owned by the default (first) teamspace.
      const changed = this.db
        .prepare(
          'UPDATE libraries SET visibility = ?, teamspace_id = coalesce(teamspace_id, (SELECT min(id) FROM teamspaces)), access_rev = access_rev + 1 WHERE id = ?',
        )
        .run(visibility, id).changes;
      if (changed === 0) return false;
      this.db.prepare('DELETE FROM library_grants WHERE library_id = ?').run(id);
      const add = this.db.prepare('INSERT INTO library_grants (library_id, teamspace_id) VALUES (?, ?)');
      for (const t of new Set(grants)) add.run(id, t);
      return true;
    })();
  }

  /** Deletes a library with all versions and snippets (index rows included). */
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(() => this.deleteLibraryRows(id))();
  }

  /**
   * Deletes a library that has no documentation version (a failed first build leaves it so), with
   * what it holds, in one transaction: the check and the delete together, so that a build another
   * writer began meanwhile keeps its library. False when it has a version or does not exist.
   */
  async deleteIfUnversioned(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.stmt("SELECT 1 FROM library_versions WHERE library_id = ? AND kind = 'docs' LIMIT 1").get(id) !== undefined) return false;
      return this.deleteLibraryRows(id);
    })();
  }

  private deleteLibraryRows(id: string): boolean {
    const all = this.stmt('SELECT id FROM library_versions WHERE library_id = ?').all(id) as { id: number }[];
    for (const v of all) this.deleteVersionRows(v.id);
    return this.stmt('DELETE FROM libraries WHERE id = ?').run(id).changes > 0;
  }

  /** The documentation versions of a library (never the source-code partitions). */
  versions(libraryId: string): LibraryVersion[] {
    return (this.stmt("SELECT * FROM library_versions WHERE library_id = ? AND kind = 'docs' ORDER BY id").all(libraryId) as VersionRow[]).map(toVersion);
  }

  version(id: number): LibraryVersion | null {
    const r = this.stmt('SELECT * FROM library_versions WHERE id = ?').get(id) as VersionRow | undefined;
    return r ? toVersion(r) : null;
  }

  /** The version readers are served for (library, tag), if any. */
  currentVersion(libraryId: string, tag: string): LibraryVersion | null {
    const r = this.stmt("SELECT * FROM library_versions WHERE library_id = ? AND tag = ? AND is_current = 1 AND kind = 'docs'").get(libraryId, tag) as
      | VersionRow
      | undefined;
    return r ? toVersion(r) : null;
  }

  /** Every served version of every library (one row per library and tag). */
  allCurrentVersions(): LibraryVersion[] {
    return (this.stmt('SELECT * FROM library_versions WHERE is_current = 1 ORDER BY library_id, tag').all() as VersionRow[]).map(toVersion);
  }

  /** Marks a version's derived search data (term index, snippet embeddings) complete: set when a build is swapped in, or by the start-up backfill. */
  async markSearchIndexed(versionId: number): Promise<void> {
    this.stmt('UPDATE library_versions SET search_indexed = 1 WHERE id = ?').run(versionId);
  }

  /** Served versions whose derived search data is not complete (versions older than it). */
  async searchUnindexedVersions(): Promise<number[]> {
    return (this.stmt("SELECT id FROM library_versions WHERE state = 'ready' AND search_indexed = 0 ORDER BY id").all() as { id: number }[]).map((r) => r.id);
  }

  async buildingVersionForJob(jobId: number, kind: VersionKind = 'docs'): Promise<LibraryVersion | null> {
    const r = this.stmt("SELECT * FROM library_versions WHERE job_id = ? AND state = 'building' AND kind = ? ORDER BY id DESC LIMIT 1").get(jobId, kind) as
      | VersionRow
      | undefined;
    return r ? toVersion(r) : null;
  }

  async createVersion(libraryId: string, tag: string, jobId: number | null, now: string, kind: VersionKind = 'docs'): Promise<number> {
    return this.insertVersion(libraryId, tag, jobId, now, kind);
  }

  /**
   * Begins a build: the library's row when it has none (with `meta`; a library that exists keeps its
   * metadata until the swap writes it) and a new 'building' version, in one transaction. The new
   * library stays invisible to search until its first version is swapped in.
   */
  async createBuild(meta: LibraryMeta, tag: string, jobId: number | null, now: string, kind: VersionKind = 'docs'): Promise<number> {
    return this.db.transaction(() => {
      if (this.stmt('SELECT 1 FROM libraries WHERE id = ?').get(meta.id) === undefined) this.upsertRow(meta, now);
      return this.insertVersion(meta.id, tag, jobId, now, kind);
    })();
  }

  private insertVersion(libraryId: string, tag: string, jobId: number | null, now: string, kind: VersionKind): number {
    const info = this.stmt(
      "INSERT INTO library_versions (library_id, tag, state, is_current, job_id, created_at, updated_at, kind) VALUES (?, ?, 'building', 0, ?, ?, ?, ?)",
    ).run(libraryId, tag, jobId, now, now, kind);
    return Number(info.lastInsertRowid);
  }

  /**
   * Makes a built version the served one for its (library, tag) in one transaction:
   * readers see the old or the new version, never both. Returns the ids of the retired versions.
   */
  async swapIn(
    versionId: number,
    meta: LibraryMeta | null,
    totals: { tokens: number; snippets: number },
    now: string,
    source?: { versionId: number; tokens: number; snippets: number },
  ): Promise<number[]> {
    return this.db.transaction(() => {
      const v = this.version(versionId);
      if (!v || v.state !== 'building') throw new Error(`version ${versionId} is not being built`);
      if (source) {
        // The source partition is ready with its docs version, in the same transaction, and never current itself.
        this.stmt("UPDATE library_versions SET state = 'ready', total_tokens = ?, total_snippets = ?, updated_at = ? WHERE id = ? AND kind = 'source'").run(
          source.tokens,
          source.snippets,
          now,
          source.versionId,
        );
        this.stmt('UPDATE library_versions SET source_version_id = ? WHERE id = ?').run(source.versionId, versionId);
      }
      if (meta) this.upsertRow(meta, now);
      const old = this.stmt("SELECT id FROM library_versions WHERE library_id = ? AND tag = ? AND is_current = 1 AND kind = 'docs'").all(
        v.libraryId,
        v.tag,
      ) as { id: number }[];
      this.stmt(
        "UPDATE library_versions SET is_current = 0, state = 'retired', updated_at = ? WHERE library_id = ? AND tag = ? AND is_current = 1 AND kind = 'docs'",
      ).run(now, v.libraryId, v.tag);
      this.db
        .prepare("UPDATE library_versions SET is_current = 1, state = 'ready', total_tokens = ?, total_snippets = ?, updated_at = ? WHERE id = ?")
        .run(totals.tokens, totals.snippets, now, versionId);
      this.stmt('UPDATE libraries SET updated_at = ? WHERE id = ?').run(now, v.libraryId);
      return old.map((r) => r.id);
    })();
  }

  async markVersion(versionId: number, state: VersionState, now: string): Promise<void> {
    this.stmt('UPDATE library_versions SET state = ?, updated_at = ? WHERE id = ?').run(state, now, versionId);
  }

  /** Retired, failed and abandoned versions whose rows can be purged. */
  async purgeableVersions(): Promise<number[]> {
    return (this.stmt("SELECT id FROM library_versions WHERE state IN ('retired','failed')").all() as { id: number }[]).map((r) => r.id);
  }

  /** Deletes a version's snippets, index rows and the version row, in batches so writers are not blocked long. */
  async deleteVersion(versionId: number, batch = 5000): Promise<void> {
    this.deleteVersionInBatches(versionId, batch);
  }

  private deleteVersionInBatches(versionId: number, batch: number): void {
    // A docs version takes its source-code partition with it.
    const partition = this.version(versionId)?.dynamicVersionId ?? null;
    if (partition !== null && partition !== versionId) this.deleteVersionInBatches(partition, batch);
    // Not complete any more, before the first batch commits: the shared vector cache keys on the
    // marker (SearchStore.sharedKey) and must never see a partly deleted partition still marked.
    this.stmt('UPDATE library_versions SET vectors_embedder = NULL WHERE id = ?').run(versionId);
    for (;;) {
      const done = this.db.transaction(() => {
        const ids = (this.stmt('SELECT id FROM snippets WHERE version_id = ? LIMIT ?').all(versionId, batch) as { id: number }[]).map((r) => r.id);
        if (ids.length === 0) return true;
        this.deleteSnippetRows(ids);
        return false;
      })();
      if (done) break;
    }
    this.deleteTermIndex(versionId);
    this.stmt('DELETE FROM library_versions WHERE id = ?').run(versionId);
  }

  private deleteTermIndex(versionId: number): void {
    this.stmt('DELETE FROM term_postings WHERE version_id = ?').run(versionId);
    this.stmt('DELETE FROM term_chunks WHERE version_id = ?').run(versionId);
  }

  /** The source-code partition a docs version points at, when it is one (the retrieval of a thin answer reads it). */
  dynamicPartition(versionId: number): LibraryVersion | null {
    const r = this.stmt("SELECT * FROM library_versions WHERE id = ? AND kind = 'source'").get(versionId) as VersionRow | undefined;
    return r ? toVersion(r) : null;
  }

  private deleteVersionRows(versionId: number): void {
    const ids = (this.stmt('SELECT id FROM snippets WHERE version_id = ?').all(versionId) as { id: number }[]).map((r) => r.id);
    this.deleteSnippetRows(ids);
    this.deleteTermIndex(versionId);
    this.stmt('DELETE FROM library_versions WHERE id = ?').run(versionId);
  }

  private deleteSnippetRows(ids: number[]): void {
    const fts = this.stmt('DELETE FROM snippet_fts WHERE rowid = ?');
    const hasVec = this.stmt("SELECT 1 FROM sqlite_master WHERE name = 'snippet_vec'").get() !== undefined;
    const vec = hasVec ? this.stmt('DELETE FROM snippet_vec WHERE rowid = ?') : null;
    const row = this.stmt('DELETE FROM snippets WHERE id = ?');
    // Whole chunks with one statement per table (half the time of a statement per row: a refresh
    // that replaces a large version purges the old one in its commit); the rest row by row.
    const whole = ids.length - (ids.length % DELETE_CHUNK);
    const list = Array.from({ length: DELETE_CHUNK }, () => '?').join(',');
    for (let i = 0; i < whole; i += DELETE_CHUNK) {
      const chunk = ids.slice(i, i + DELETE_CHUNK);
      this.stmt(`DELETE FROM snippet_fts WHERE rowid IN (${list})`).run(...chunk);
      if (hasVec) this.stmt(`DELETE FROM snippet_vec WHERE rowid IN (${list})`).run(...chunk.map(BigInt));
      this.stmt(`DELETE FROM snippets WHERE id IN (${list})`).run(...chunk);
    }
    for (const id of ids.slice(whole)) {
      fts.run(id);
      vec?.run(BigInt(id));
      row.run(id);
    }
  }
}
