import type Database from 'better-sqlite3';
import type { Db } from './db.ts';
import { int8Unit } from '../embed/quantize.ts';

type Statement = Database.Statement<unknown[], unknown>;

/** A token the scope column holds (`v<versionId>`), bounded as the unicode61 tokenizer bounds tokens. */
const SCOPE_TOKEN = /(?:^|[^\p{L}\p{N}])v\d+(?![\p{L}\p{N}])/iu;

/**
 * The user's match restricted to the text columns. The column filter makes FTS5 check every
 * matching row's positions (about 11% of the query time at 1M snippets), and it only matters when
 * a query term could match the scope column, whose only tokens are `v<versionId>`: without such a
 * term the plain expression matches exactly the same rows with the same bm25 scores.
 */
export function textColumnsMatch(match: string): string {
  return SCOPE_TOKEN.test(match) ? `{title breadcrumb description code content}: (${match})` : `(${match})`;
}

export interface LexicalHit {
  id: number;
  /** -bm25: larger is better. */
  score: number;
}

export interface VectorHit {
  id: number;
  /** Smaller is nearer (the L2 distance of the 8-bit vectors). */
  distance: number;
}

/** The read side of retrieval: read snapshots, vector candidates of one library version, pages. (BM25 candidates: server/store/terms.ts.) */
export class SearchStore {
  private vecStmts: { knn: Statement } | null = null;

  private readonly pageStmt;

  constructor(private readonly db: Db) {
    // Range over the (version_id, source_id) index: the page URL itself and every URL#anchor on it.
    this.pageStmt = db.prepare("SELECT id FROM snippets WHERE version_id = ? AND source_id >= ? AND source_id < ? ORDER BY position LIMIT ?");
  }

  /**
   * Runs fn inside one read transaction, so every statement in it sees the same snapshot of the
   * database: an answer never mixes rows of a version being swapped out with those of its successor
   * (in WAL mode a reader's snapshot is fixed at its first read).
   */
  snapshot<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    return this.db.transaction(fn).deferred();
  }

  private vec(): { knn: Statement } | null {
    if (this.vecStmts) return this.vecStmts;
    if (this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'snippet_vec'").get() === undefined) return null;
    this.vecStmts = { knn: this.db.prepare('SELECT rowid AS id, distance FROM snippet_vec WHERE embedding MATCH vec_int8(?) AND k = ? AND version_id = ?') };
    return this.vecStmts;
  }

  /**
   * Nearest neighbours on the version's partition of snippet_vec by the L2 distance of the 8-bit
   * vectors (the order of cosine similarity, nearly; exact similarities come from the snippets'
   * float copies); [] when there is no vector table.
   */
  knn(versionId: number, query: Float32Array, k: number): VectorHit[] {
    const v = this.vec();
    if (!v) return [];
    const q = int8Unit(query);
    try {
      return v.knn.all(q, k, BigInt(versionId)) as VectorHit[];
    } catch (err) {
      // A table recreated under us (embedder change) invalidates the statement: retry once.
      this.vecStmts = null;
      const again = this.vec();
      if (!again) return [];
      if (/dimension|mismatch/i.test((err as Error).message)) return [];
      return again.knn.all(q, k, BigInt(versionId)) as VectorHit[];
    }
  }

  /** Ids of the snippets of one page (source URL without its #anchor) in a version, in page order. */
  page(versionId: number, pageUrl: string, limit = 200): number[] {
    // '$' follows '#' in code order, so [page, page$) holds the page and its page#anchor rows (and nothing a URL would contain).
    return (this.pageStmt.all(versionId, pageUrl, `${pageUrl}$`, limit) as { id: number }[]).map((r) => r.id);
  }
}
