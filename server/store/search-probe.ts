import { statementCache, type Db, type Statement } from './db.ts';
import { ftsScope } from './snippets.ts';
import { textColumnsMatch } from './search.ts';

export interface VersionProbe {
  versionId: number;
  /** How many of the probed top rows belong to this version. */
  hits: number;
  /** Sum of the BM25 relevance (positive; larger is better) of its best rows (see topVersions). */
  score: number;
}

/**
 * The best-first matching rows grouped by version: a version's score sums its `perVersion` best rows
 * (both backends' topVersions).
 */
export function probesByVersion(rows: readonly { versionId: number; score: number }[], perVersion: number): VersionProbe[] {
  const byVersion = new Map<number, VersionProbe>();
  for (const r of rows) {
    const p = byVersion.get(r.versionId) ?? { versionId: r.versionId, hits: 0, score: 0 };
    p.hits++;
    if (p.hits <= perVersion) p.score += r.score;
    byVersion.set(r.versionId, p);
  }
  return [...byVersion.values()].sort((a, b) => b.score - a.score);
}

/**
 * Cheap full-text probes used to choose libraries (not to rank snippets): which library versions
 * hold the documents that best match a question, and how well one version matches.
 * `match` is an FTS5 expression built by the caller with user text quoted.
 */
export class SearchProbeStore {
  /** Prepared once per SQL text: a library-less search runs these on every request. */
  private readonly stmt: (sql: string) => Statement;

  constructor(db: Db) {
    this.stmt = statementCache(db);
  }

  /**
   * Groups the `limit` best-matching rows of the whole index by version; a version's score sums its
   * `perVersion` best rows (its best evidence, not how many loosely matching snippets it has).
   */
  topVersions(match: string, limit: number, perVersion: number): VersionProbe[] {
    const rows = this.stmt(
      `SELECT s.version_id AS versionId, -m.rank AS score
           FROM (SELECT rowid, rank FROM snippet_fts WHERE snippet_fts MATCH ? ORDER BY rank LIMIT ?) m
           JOIN snippets s ON s.id = m.rowid`,
    ).all(textColumnsMatch(match), limit) as { versionId: number; score: number }[];
    return probesByVersion(rows, perVersion);
  }

  /** The `limit` best rows of one version (restricted inside the index), summed. */
  versionScore(versionId: number, match: string, limit: number): VersionProbe {
    const rows = this.stmt('SELECT -rank AS score FROM snippet_fts WHERE snippet_fts MATCH ? ORDER BY rank LIMIT ?').all(
      `scope:"${ftsScope(versionId)}" AND ${textColumnsMatch(match)}`,
      limit,
    ) as { score: number }[];
    return { versionId, hits: rows.length, score: rows.reduce((t, r) => t + r.score, 0) };
  }

  /** How many snippets hold each term (terms absent from the index are left out). */
  documentFrequencies(terms: string[]): Map<string, number> {
    const out = new Map<string, number>();
    if (terms.length === 0) return out;
    const stmt = this.stmt('SELECT doc FROM snippet_fts_vocab WHERE term = ?');
    for (const t of terms) {
      const r = stmt.get(t) as { doc: number } | undefined;
      if (r && r.doc > 0) out.set(t, r.doc);
    }
    return out;
  }

  /**
   * Changes whenever a library or a served version is added, removed or swapped, a library's
   * visibility or grants change, or a version's model is stored (it holds the library's package
   * names; migration 017 indexes its time): lets the search layer cache its library catalogue and rebuild it
   * only when this differs.
   */
  catalogStamp(): string {
    const r = this.stmt(
      `SELECT (SELECT count(*) || ':' || coalesce(max(updated_at), '') || ':' || total(access_rev) FROM libraries) || '|' ||
                (SELECT count(*) || ':' || coalesce(max(id), 0) || ':' || coalesce(max(updated_at), '') FROM library_versions WHERE is_current = 1) || '|' ||
                (SELECT count(*) || ':' || coalesce(max(built_at), '') FROM search_models) AS stamp`,
    ).get() as { stamp: string };
    return r.stamp;
  }
}
