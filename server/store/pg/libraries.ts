import type { Library, LibraryMeta, LibraryVersion, LibraryVisibility, VersionState } from '../../../lib/model.ts';
import { toLibrary, toVersion, type LibraryRow, type LibraryStore, type VersionKind, type VersionRow } from '../libraries.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { noNul } from './text.ts';
import { pgQuery, withTransaction } from './transaction.ts';

/** A library row with its grants, comma-separated as SQLite's group_concat gives them (toLibrary sorts them). */
export const LIBRARY_SELECT =
  "SELECT l.*, (SELECT string_agg(g.teamspace_id::text, ',') FROM library_grants g WHERE g.library_id = l.id) AS grants FROM libraries l";

/** The served documentation version of ($1 library, $2 tag). */
const CURRENT_DOCS = "library_id = $1 AND tag = $2 AND is_current = 1 AND kind = 'docs'";

/**
 * Libraries and their versions on PostgreSQL, method for method SQLite's LibraryStore
 * (server/store/libraries.ts). Text is ordered with COLLATE "C", SQLite's byte order, whatever the
 * database's collation. What SQLite does in `db.transaction` runs on one client between BEGIN and
 * COMMIT; a version swap also locks its library's row, so that swaps of one library on several nodes
 * run one after the other, as SQLite's single writer runs them.
 *
 * What SQLite deletes beside a snippet goes with its row here: the full-text row is the row's `fts`
 * column, and its `snippet_vec` row is deleted by its foreign key's cascade (migration 002); the term
 * index tables are deleted the same way as on SQLite.
 */
export class PgLibraryStore implements SameShape<LibraryStore> {
  constructor(private readonly pool: PgPool) {}

  async get(id: string): Promise<Library | null> {
    const { rows } = await pgQuery<LibraryRow>(this.pool, `${LIBRARY_SELECT} WHERE l.id = $1`, [id]);
    return rows[0] ? toLibrary(rows[0]) : null;
  }

  /**
   * A library and its documentation versions (get, then versions) in one statement: resolving a
   * libraryId reads both, twice per /api/v2/context request, and each statement is a round trip. The
   * versions travel as JSON rows; their columns are text and integers, which JSON carries unchanged.
   */
  async withVersions(id: string): Promise<{ library: Library; versions: LibraryVersion[] } | null> {
    const { rows } = await pgQuery<LibraryRow & { versions_json: VersionRow[] }>(
      this.pool,
      `SELECT l.*, (SELECT string_agg(g.teamspace_id::text, ',') FROM library_grants g WHERE g.library_id = l.id) AS grants,
         (SELECT coalesce(json_agg(v ORDER BY v.id), '[]'::json) FROM library_versions v WHERE v.library_id = l.id AND v.kind = 'docs') AS versions_json
       FROM libraries l WHERE l.id = $1`,
      [id],
    );
    const r = rows[0];
    if (!r) return null;
    const { versions_json: versions, ...library } = r;
    return { library: toLibrary(library), versions: versions.map(toVersion) };
  }

  async list(): Promise<Library[]> {
    return (await pgQuery<LibraryRow>(this.pool, `${LIBRARY_SELECT} ORDER BY l.id COLLATE "C"`)).rows.map(toLibrary);
  }

  /** As SQLite's: a new library takes the given owner and visibility, an existing one keeps its own. */
  async upsert(meta: LibraryMeta, now: string): Promise<void> {
    await upsertLibrary(this.pool, meta, now);
  }

  async setMeta(id: string, meta: { title?: string; description?: string }): Promise<boolean> {
    const r = await pgQuery(
      this.pool,
      'UPDATE libraries SET title = coalesce($1, title), description = coalesce($2, description), access_rev = access_rev + 1 WHERE id = $3',
      [noNul(meta.title ?? null), noNul(meta.description ?? null), id],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async setTrust(id: string, t: { stars?: number | null; trustScore?: number | null; verified?: boolean; license?: string | null }): Promise<boolean> {
    const fields: [string, unknown][] = [];
    if (t.stars !== undefined) fields.push(['stars', t.stars]);
    if (t.trustScore !== undefined) fields.push(['trust_score', t.trustScore]);
    if (t.verified !== undefined) fields.push(['verified', t.verified ? 1 : 0]);
    if (t.license !== undefined) fields.push(['license', t.license]);
    if (!fields.length) return (await this.get(id)) !== null;
    const sets = fields.map(([c], i) => `${c} = $${i + 1}`);
    const args = [...fields.map(([, v]) => v), id];
    // access_rev: the search catalogue (and the policy filters on stars, trust and license) must see the change.
    const r = await pgQuery(this.pool, `UPDATE libraries SET ${sets.join(', ')}, access_rev = access_rev + 1 WHERE id = $${args.length}`, args);
    return (r.rowCount ?? 0) > 0;
  }

  /** Visibility and grants in one transaction: a grant to a teamspace that does not exist undoes the whole change. */
  async setAccess(id: string, visibility: LibraryVisibility, grants: number[]): Promise<boolean> {
    return withTransaction(this.pool, async () => {
      // A library that no teamspace owned yet is now owned by the default (first) teamspace.
      const changed = await pgQuery(
        this.pool,
        'UPDATE libraries SET visibility = $1, teamspace_id = coalesce(teamspace_id, (SELECT min(id) FROM teamspaces)), access_rev = access_rev + 1 WHERE id = $2',
        [visibility, id],
      );
      if (changed.rowCount === 0) return false;
      await pgQuery(this.pool, 'DELETE FROM library_grants WHERE library_id = $1', [id]);
      const unique = [...new Set(grants)];
      if (unique.length) await pgQuery(this.pool, 'INSERT INTO library_grants (library_id, teamspace_id) SELECT $1, unnest($2::bigint[])', [id, unique]);
      return true;
    });
  }

  /** Deletes a library with all versions and snippets (index rows included), in one transaction. */
  async delete(id: string): Promise<boolean> {
    return withTransaction(this.pool, async () => {
      await lockLibrary(this.pool, id);
      return deleteLibraryRows(this.pool, id);
    });
  }

  /**
   * As SQLite's: the library goes, with what it holds, only when it has no documentation version.
   * Its row is locked before the check: a version another node creates meanwhile (its foreign key
   * check share-locks the row) is either seen by the check or waits and then finds the library gone.
   */
  async deleteIfUnversioned(id: string): Promise<boolean> {
    return withTransaction(this.pool, async () => {
      await lockLibrary(this.pool, id);
      const { rows } = await pgQuery(this.pool, "SELECT 1 FROM library_versions WHERE library_id = $1 AND kind = 'docs' LIMIT 1", [id]);
      if (rows.length > 0) return false;
      return deleteLibraryRows(this.pool, id);
    });
  }

  async versions(libraryId: string): Promise<LibraryVersion[]> {
    const { rows } = await pgQuery<VersionRow>(this.pool, "SELECT * FROM library_versions WHERE library_id = $1 AND kind = 'docs' ORDER BY id", [libraryId]);
    return rows.map(toVersion);
  }

  async version(id: number): Promise<LibraryVersion | null> {
    return versionOn(this.pool, id);
  }

  async currentVersion(libraryId: string, tag: string): Promise<LibraryVersion | null> {
    const { rows } = await pgQuery<VersionRow>(this.pool, `SELECT * FROM library_versions WHERE ${CURRENT_DOCS}`, [libraryId, tag]);
    return rows[0] ? toVersion(rows[0]) : null;
  }

  async allCurrentVersions(): Promise<LibraryVersion[]> {
    const { rows } = await pgQuery<VersionRow>(
      this.pool,
      'SELECT * FROM library_versions WHERE is_current = 1 ORDER BY library_id COLLATE "C", tag COLLATE "C"',
    );
    return rows.map(toVersion);
  }

  async markSearchIndexed(versionId: number): Promise<void> {
    await pgQuery(this.pool, 'UPDATE library_versions SET search_indexed = 1 WHERE id = $1', [versionId]);
  }

  async searchUnindexedVersions(): Promise<number[]> {
    const { rows } = await pgQuery<{ id: number }>(this.pool, "SELECT id FROM library_versions WHERE state = 'ready' AND search_indexed = 0 ORDER BY id");
    return rows.map((r) => r.id);
  }

  async buildingVersionForJob(jobId: number, kind: VersionKind = 'docs'): Promise<LibraryVersion | null> {
    const { rows } = await pgQuery<VersionRow>(
      this.pool,
      "SELECT * FROM library_versions WHERE job_id = $1 AND state = 'building' AND kind = $2 ORDER BY id DESC LIMIT 1",
      [jobId, kind],
    );
    return rows[0] ? toVersion(rows[0]) : null;
  }

  async createVersion(libraryId: string, tag: string, jobId: number | null, now: string, kind: VersionKind = 'docs'): Promise<number> {
    return insertVersion(this.pool, libraryId, tag, jobId, now, kind);
  }

  /** As SQLite's, in one transaction: the library's row when it has none (an existing row is left as it is), and the building version. */
  async createBuild(meta: LibraryMeta, tag: string, jobId: number | null, now: string, kind: VersionKind = 'docs'): Promise<number> {
    return withTransaction(this.pool, async () => {
      const { rows } = await pgQuery(this.pool, 'SELECT 1 FROM libraries WHERE id = $1', [meta.id]);
      if (rows.length === 0) await upsertLibrary(this.pool, meta, now);
      return insertVersion(this.pool, meta.id, tag, jobId, now, kind);
    });
  }

  /**
   * Makes a built version the served one for its (library, tag) in one transaction: readers on any
   * connection see the old or the new version, never both and never none. Returns the ids of the retired versions.
   */
  async swapIn(
    versionId: number,
    meta: LibraryMeta | null,
    totals: { tokens: number; snippets: number },
    now: string,
    source?: { versionId: number; tokens: number; snippets: number },
  ): Promise<number[]> {
    return withTransaction(this.pool, async () => {
      // Swaps of one library wait for each other (SQLite has one writer): without the lock, two nodes
      // would each retire the version current when they started and the second would then break the
      // one-current-version index instead of retiring the first's. NO KEY UPDATE lets new version rows
      // (whose foreign key checks share-lock the library) be created meanwhile.
      const libraryId = (await versionOn(this.pool, versionId))?.libraryId;
      if (libraryId !== undefined) await pgQuery(this.pool, 'SELECT 1 FROM libraries WHERE id = $1 FOR NO KEY UPDATE', [libraryId]);
      const v = await versionOn(this.pool, versionId, ' FOR UPDATE');
      if (!v || v.state !== 'building') throw new Error(`version ${versionId} is not being built`);
      if (source) {
        // The source partition is ready with its docs version, in the same transaction, and never current itself.
        await pgQuery(
          this.pool,
          "UPDATE library_versions SET state = 'ready', total_tokens = $1, total_snippets = $2, updated_at = $3 WHERE id = $4 AND kind = 'source'",
          [source.tokens, source.snippets, now, source.versionId],
        );
        await pgQuery(this.pool, 'UPDATE library_versions SET source_version_id = $1 WHERE id = $2', [source.versionId, versionId]);
      }
      if (meta) await upsertLibrary(this.pool, meta, now);
      const old = await pgQuery<{ id: number }>(
        this.pool,
        `UPDATE library_versions SET is_current = 0, state = 'retired', updated_at = $3 WHERE ${CURRENT_DOCS} RETURNING id`,
        [v.libraryId, v.tag, now],
      );
      await pgQuery(
        this.pool,
        "UPDATE library_versions SET is_current = 1, state = 'ready', total_tokens = $1, total_snippets = $2, updated_at = $3 WHERE id = $4",
        [totals.tokens, totals.snippets, now, versionId],
      );
      await pgQuery(this.pool, 'UPDATE libraries SET updated_at = $1 WHERE id = $2', [now, v.libraryId]);
      return old.rows.map((r) => r.id).sort((a, b) => a - b);
    });
  }

  async markVersion(versionId: number, state: VersionState, now: string): Promise<void> {
    await pgQuery(this.pool, 'UPDATE library_versions SET state = $1, updated_at = $2 WHERE id = $3', [state, now, versionId]);
  }

  async purgeableVersions(): Promise<number[]> {
    // SQLite answers in the order of the index it scans, library_versions_library (library_id, state, id).
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      `SELECT id FROM library_versions WHERE state IN ('retired','failed') ORDER BY library_id COLLATE "C", state COLLATE "C", id`,
    );
    return rows.map((r) => r.id);
  }

  /** Deletes a version's snippets, index rows and the version row, `batch` snippets per statement (each its own transaction, as in SQLite). */
  async deleteVersion(versionId: number, batch = 5000): Promise<void> {
    // A docs version takes its source-code partition with it.
    const partition = (await this.version(versionId))?.dynamicVersionId ?? null;
    if (partition !== null && partition !== versionId) await this.deleteVersion(partition, batch);
    // Not complete any more before the first batch commits (SQLite's shared vector cache keys on the marker).
    await pgQuery(this.pool, 'UPDATE library_versions SET vectors_embedder = NULL WHERE id = $1', [versionId]);
    for (;;) {
      const r = await pgQuery(this.pool, 'DELETE FROM snippets WHERE id IN (SELECT id FROM snippets WHERE version_id = $1 LIMIT $2)', [versionId, batch]);
      if ((r.rowCount ?? 0) === 0) break;
    }
    await deleteTermIndex(this.pool, [versionId]);
    await pgQuery(this.pool, 'DELETE FROM library_versions WHERE id = $1', [versionId]);
  }

  async dynamicPartition(versionId: number): Promise<LibraryVersion | null> {
    const { rows } = await pgQuery<VersionRow>(this.pool, "SELECT * FROM library_versions WHERE id = $1 AND kind = 'source'", [versionId]);
    return rows[0] ? toVersion(rows[0]) : null;
  }
}

async function insertVersion(pool: PgPool, libraryId: string, tag: string, jobId: number | null, now: string, kind: VersionKind): Promise<number> {
  const { rows } = await pgQuery<{ id: number }>(
    pool,
    "INSERT INTO library_versions (library_id, tag, state, is_current, job_id, created_at, updated_at, kind) VALUES ($1, $2, 'building', 0, $3, $4, $4, $5) RETURNING id",
    [libraryId, tag, jobId, now, kind],
  );
  return rows[0].id;
}

/**
 * The library's row first, as a swap takes it: a swap on another node waits for the delete (and
 * then finds its version gone) instead of holding the library while the delete holds the version.
 */
async function lockLibrary(pool: PgPool, id: string): Promise<void> {
  await pgQuery(pool, 'SELECT 1 FROM libraries WHERE id = $1 FOR UPDATE', [id]);
}

/** A library's versions, their snippets and index rows, and its row (inside the caller's transaction). */
async function deleteLibraryRows(pool: PgPool, id: string): Promise<boolean> {
  const { rows } = await pgQuery<{ id: number }>(pool, 'SELECT id FROM library_versions WHERE library_id = $1', [id]);
  const ids = rows.map((r) => r.id);
  if (ids.length) {
    await pgQuery(pool, 'DELETE FROM snippets WHERE version_id = ANY($1::bigint[])', [ids]);
    await deleteTermIndex(pool, ids);
    await pgQuery(pool, 'DELETE FROM library_versions WHERE id = ANY($1::bigint[])', [ids]);
  }
  return ((await pgQuery(pool, 'DELETE FROM libraries WHERE id = $1', [id])).rowCount ?? 0) > 0;
}

async function versionOn(pool: PgPool, id: number, lock = ''): Promise<LibraryVersion | null> {
  const { rows } = await pgQuery<VersionRow>(pool, `SELECT * FROM library_versions WHERE id = $1${lock}`, [id]);
  return rows[0] ? toVersion(rows[0]) : null;
}

/** The term index rows of these versions (no foreign key ties them to the version row). */
async function deleteTermIndex(pool: PgPool, versionIds: number[]): Promise<void> {
  await pgQuery(pool, 'DELETE FROM term_postings WHERE version_id = ANY($1::bigint[])', [versionIds]);
  await pgQuery(pool, 'DELETE FROM term_chunks WHERE version_id = ANY($1::bigint[])', [versionIds]);
}

/** SQLite's upsert, on the pool or on a transaction's client (a swap updates the metadata with the version). */
async function upsertLibrary(pool: PgPool, meta: LibraryMeta, now: string): Promise<void> {
  await pgQuery(
    pool,
    `INSERT INTO libraries AS l (id, title, description, source_type, source_url, language, branch, docs_repo_url, docs_site_url,
       trust_score, verified, stars, license, teamspace_id, visibility, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)
     ON CONFLICT (id) DO UPDATE SET title = excluded.title, description = excluded.description, source_type = excluded.source_type,
       source_url = coalesce(excluded.source_url, l.source_url), language = excluded.language, branch = coalesce(excluded.branch, l.branch),
       docs_repo_url = coalesce(excluded.docs_repo_url, l.docs_repo_url), docs_site_url = coalesce(excluded.docs_site_url, l.docs_site_url),
       trust_score = coalesce(excluded.trust_score, l.trust_score), verified = greatest(excluded.verified, l.verified),
       stars = coalesce(excluded.stars, l.stars), license = coalesce(excluded.license, l.license),
       teamspace_id = coalesce(l.teamspace_id, excluded.teamspace_id), updated_at = excluded.updated_at`,
    [
      meta.id,
      noNul(meta.title),
      noNul(meta.description ?? ''),
      meta.sourceType,
      meta.sourceUrl ?? null,
      meta.language ?? 'en',
      meta.branch ?? null,
      meta.docsRepoUrl ?? null,
      meta.docsSiteUrl ?? null,
      meta.trustScore ?? null,
      meta.verified ? 1 : 0,
      meta.stars ?? null,
      meta.license ?? null,
      meta.teamspaceId ?? null,
      meta.visibility ?? (meta.teamspaceId == null ? 'instance' : 'teamspace'),
      now,
    ],
  );
}
