import type { Db } from './db.ts';
import type { Statement } from 'better-sqlite3';
import { ftsScope } from './snippets.ts';
import { BM25_WEIGHTS, textColumnsMatch, type LexicalHit } from './search.ts';

export interface VersionProbe {
  versionId: number;
  /** How many of the probed top rows belong to this version. */
  hits: number;
  /** Sum of the rows' BM25 relevance (positive; larger is better). */
  score: number;
}

/**
 * Cheap full-text probes used to choose libraries (not to rank snippets): which library versions
 * hold the documents that best match a question, and how well one version matches.
 * `match` is an FTS5 expression built by the caller with user text quoted.
 */
export class SearchProbeStore {
  constructor(private readonly db: Db) {}

  /** Groups the `limit` best-matching rows of the whole index by version. */
  topVersions(match: string, limit: number): VersionProbe[] {
    const rows = this.db
      .prepare(
        `SELECT s.version_id AS versionId, -m.rank AS score
           FROM (SELECT rowid, rank FROM snippet_fts WHERE snippet_fts MATCH ? ORDER BY rank LIMIT ?) m
           JOIN snippets s ON s.id = m.rowid`,
      )
      .all(textColumnsMatch(match), limit) as { versionId: number; score: number }[];
    const byVersion = new Map<number, VersionProbe>();
    for (const r of rows) {
      const p = byVersion.get(r.versionId) ?? { versionId: r.versionId, hits: 0, score: 0 };
      p.hits++;
      p.score += r.score;
      byVersion.set(r.versionId, p);
    }
    return [...byVersion.values()].sort((a, b) => b.score - a.score);
  }

  /** The `limit` best rows of one version (restricted inside the index), summed. */
  versionScore(versionId: number, match: string, limit: number): VersionProbe {
    const rows = this.db
      .prepare('SELECT -rank AS score FROM snippet_fts WHERE snippet_fts MATCH ? ORDER BY rank LIMIT ?')
      .all(`scope:"${ftsScope(versionId)}" AND ${textColumnsMatch(match)}`, limit) as { score: number }[];
    return { versionId, hits: rows.length, score: rows.reduce((t, r) => t + r.score, 0) };
  }

  /**
   * BM25 lists of several versions from ONE full-text query (the versions' scopes OR-ed inside the
   * match): FTS5 computes a query's term statistics over the whole index once per statement, which
   * is most of the cost of a query on a large index, so one statement for four libraries costs about
   * a third of four. Scores use the column weights of SearchStore.lexical and are comparable across
   * the versions. Returns at most perVersion hits per version, best first.
   */
  lexicalAcross(versionIds: number[], match: string, perVersion: number, spans?: ({ lo: number; hi: number } | null)[]): Map<number, LexicalHit[]> {
    const out = new Map<number, LexicalHit[]>(versionIds.map((v) => [v, []]));
    if (!match || versionIds.length === 0) return out;
    const scopes = versionIds.map((v) => `scope:"${ftsScope(v)}"`).join(' OR ');
    // The row id range covering the versions' id spans (when known) lets FTS5 seek its doclists past
    // the rows before and after them (about 12% of this query at 1M snippets); the scopes keep it exact.
    const known = spans?.filter((s): s is { lo: number; hi: number } => s !== null) ?? [];
    const lo = known.length === versionIds.length ? Math.min(...known.map((s) => s.lo)) : 0;
    const hi = known.length === versionIds.length ? Math.max(...known.map((s) => s.hi)) : Number.MAX_SAFE_INTEGER;
    // Rows beyond perVersion x versions x 5 would only matter if one library took nearly all of them.
    const rows = this.acrossStmt()
      .all(`(${scopes}) AND ${textColumnsMatch(match)}`, lo, hi, perVersion * versionIds.length * 5) as { id: number; score: number; versionId: number }[];
    rows.sort((a, b) => b.score - a.score || a.id - b.id);
    for (const r of rows) {
      const list = out.get(r.versionId);
      if (list && list.length < perVersion) list.push({ id: r.id, score: r.score });
    }
    return out;
  }

  private across: Statement | null = null;

  private acrossStmt(): Statement {
    if (this.across) return this.across;
    const w = BM25_WEIGHTS;
    const bm25 = `bm25(snippet_fts, ${w.scope}, ${w.title}, ${w.breadcrumb}, ${w.description}, ${w.code}, ${w.content})`;
    this.across = this.db.prepare(
      `SELECT m.id AS id, m.score AS score, s.version_id AS versionId
         FROM (SELECT rowid AS id, -${bm25} AS score FROM snippet_fts WHERE snippet_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY ${bm25} LIMIT ?) m
         JOIN snippets s ON s.id = m.id`,
    );
    return this.across;
  }

  /** How many snippets hold each term (terms absent from the index are left out). */
  documentFrequencies(terms: string[]): Map<string, number> {
    const out = new Map<string, number>();
    if (terms.length === 0) return out;
    const stmt = this.db.prepare('SELECT doc FROM snippet_fts_vocab WHERE term = ?');
    for (const t of terms) {
      const r = stmt.get(t) as { doc: number } | undefined;
      if (r && r.doc > 0) out.set(t, r.doc);
    }
    return out;
  }

  private stampStmt: Statement | null = null;

  /**
   * Changes whenever a library or a served version is added, removed or swapped: lets the
   * search layer cache its library catalogue and rebuild it only when this differs.
   */
  catalogStamp(): string {
    // Read on every search request: prepared once.
    const r = (this.stampStmt ??= this.db
      .prepare(
        `SELECT (SELECT count(*) || ':' || coalesce(max(updated_at), '') FROM libraries) || '|' ||
                (SELECT count(*) || ':' || coalesce(max(id), 0) || ':' || coalesce(max(updated_at), '') FROM library_versions WHERE is_current = 1) AS stamp`,
      ))
      .get() as { stamp: string };
    return r.stamp;
  }
}
