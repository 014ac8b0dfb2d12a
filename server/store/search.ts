import type Database from 'better-sqlite3';
import type { Db } from './db.ts';
import { int8Unit } from '../../lib/vector/quantize.ts';
import { Int8Nearest } from '../../lib/vector/int8-l2.ts';
import { VectorChunkCache, type SharedVectorChunks, type VectorChunk } from './vector-chunks.ts';

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

interface VecStatements {
  knn: Statement;
  chunks: Statement | null;
  /** The parts of a version's shared-cache key (sharedKey). */
  key: Statement | null;
}

/** The read side of retrieval: read snapshots, vector candidates of one library version, pages. (BM25 candidates: server/store/terms.ts.) */
export class SearchStore {
  private vecStmts: VecStatements | null = null;
  private readyStmt: Statement | null = null;

  private readonly pageStmt;
  private readonly sectionCodeStmt;
  private readonly stampStmt;
  private readonly chunkCache: VectorChunkCache;
  private readonly shared: SharedVectorChunks | null;
  /** The parts of each version's shared key read since the database last changed (sharedKey), and the stamp they were read under. */
  private readonly keyParts = new Map<number, { marker: string | null; schema: number; first: number | null } | null>();
  private keyStamp = '';

  /**
   * `vectorCacheBytes`: memory for the vector chunks of recently searched versions (vector-chunks.ts).
   * `sharedVectors`: chunks shared with other connections, used for complete versions instead of that cache.
   */
  constructor(
    private readonly db: Db,
    options: { vectorCacheBytes?: number; sharedVectors?: SharedVectorChunks } = {},
  ) {
    this.chunkCache = new VectorChunkCache(options.vectorCacheBytes ?? 0);
    this.shared = options.sharedVectors ?? null;
    // Changes with every commit that may have touched the vectors: another connection's, or this one's.
    this.stampStmt = db.prepare("SELECT (SELECT data_version FROM pragma_data_version) || ':' || total_changes() AS stamp").pluck();
    // Range over the (version_id, source_id) index: the page URL itself and every URL#anchor on it.
    this.pageStmt = db.prepare('SELECT id FROM snippets WHERE version_id = ? AND source_id >= ? AND source_id < ? ORDER BY position LIMIT ?');
    this.sectionCodeStmt = db.prepare(
      "SELECT id, source_id AS sourceId FROM snippets WHERE version_id = ? AND source_id >= ? AND source_id < ? AND kind = 'code' ORDER BY position LIMIT 20",
    );
  }

  /** The first code snippet of a section (`URL#anchor`, its repeats `URL#anchor~2`...), or null. */
  sectionCode(versionId: number, section: string): number | null {
    // '\u007f' sorts after every URL character, so the range holds the section, its repeats and longer anchors sharing its prefix.
    const rows = this.sectionCodeStmt.all(versionId, section, `${section}\u007f`) as { id: number; sourceId: string }[];
    return rows.find((r) => r.sourceId === section || /^~\d+$/.test(r.sourceId.slice(section.length)))?.id ?? null;
  }

  /**
   * Runs fn inside one read transaction, so every statement in it sees the same snapshot of the
   * database: an answer never mixes rows of a version being swapped out with those of its successor
   * (in WAL mode a reader's snapshot is fixed at its first read).
   */
  snapshot<T>(fn: () => T): T {
    // An async fn would leave the transaction before its awaits: better-sqlite3 refuses its promise
    // when it opens the transaction, and so does this when fn joins one already open.
    if (!this.db.inTransaction) return this.db.transaction(fn).deferred();
    const out = fn();
    if (typeof (out as { then?: unknown } | null)?.then === 'function') throw new TypeError('a read snapshot cannot span an await: fn returned a promise');
    return out;
  }

  private vec(): VecStatements | null {
    if (this.vecStmts) return this.vecStmts;
    if (this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'snippet_vec'").get() === undefined) return null;
    const knn = this.db.prepare('SELECT rowid AS id, distance FROM snippet_vec WHERE embedding MATCH vec_int8(?) AND k = ? AND version_id = ?');
    let chunks: Statement | null = null;
    let key: Statement | null = null;
    try {
      // sqlite-vec 0.1.x's storage of a partitioned vec0 table: per chunk of up to `size` slots, a
      // validity bitmap, the rowids (int64) and the vectors (size x dims bytes for int8[dims]).
      chunks = this.db.prepare(
        'SELECT c.size, c.validity, c.rowids, v.vectors FROM snippet_vec_chunks c JOIN snippet_vec_vector_chunks00 v ON v.rowid = c.chunk_id WHERE c.partition00 = ? ORDER BY c.chunk_id',
      );
      key = this.db.prepare(
        `SELECT v.vectors_embedder AS marker, (SELECT schema_version FROM pragma_schema_version) AS schema,
           (SELECT min(chunk_id) FROM snippet_vec_chunks WHERE partition00 = v.id) AS first FROM library_versions v WHERE v.id = ?`,
      );
    } catch {
      // Another storage layout: sqlite-vec's own KNN only.
    }
    this.vecStmts = { knn, chunks, key };
    return this.vecStmts;
  }

  /** True when the version's vectors are complete (VectorStore.markComplete): only then does a search use them. */
  vectorsReady(versionId: number): boolean {
    this.readyStmt ??= this.db.prepare('SELECT vectors_embedder IS NOT NULL AS ready FROM library_versions WHERE id = ?');
    return (this.readyStmt.get(versionId) as { ready: number } | undefined)?.ready === 1;
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
      return this.scan(versionId, q, k) ?? (v.knn.all(q, k, BigInt(versionId)) as VectorHit[]);
    } catch (err) {
      // A table recreated under us (embedder change) invalidates the statement: retry once.
      this.vecStmts = null;
      const again = this.vec();
      if (!again) return [];
      if (/dimension|mismatch/i.test((err as Error).message)) return [];
      return again.knn.all(q, k, BigInt(versionId)) as VectorHit[];
    }
  }

  /**
   * The same KNN as vec0's, computed over its chunks with the SIMD kernel of lib/vector/int8-l2.ts
   * (vec0 scores 8-bit vectors one scalar at a time and selects its top k per chunk in O(k x size)).
   * null when a chunk is not laid out as expected (a float table of an older embedder, another
   * sqlite-vec version): the caller asks vec0. Public so a test can tell the scan ran.
   */
  scan(versionId: number, q: Buffer, k: number): VectorHit[] | null {
    const v = this.vec();
    const chunks = v?.chunks;
    if (!chunks) return null;
    const keyStmt = v.key;
    const dims = q.length;
    const load = (): VectorChunk[] | null => {
      const all = chunks.all(versionId) as VectorChunk[];
      const laidOut = all.every((r) => r.vectors.length === r.size * dims && r.rowids.length === r.size * 8 && r.validity.length * 8 >= r.size);
      return laidOut ? all : null;
    };
    // The key and the chunks it names must come from one snapshot, or a commit in between could file new vectors under an old key.
    const rows = this.snapshot(() => {
      const key = this.shared && keyStmt ? this.sharedKey(keyStmt, versionId, dims) : null;
      if (!key || !this.shared) return this.chunkCache.get(versionId, this.stampStmt.get() as string, load);
      const hit = this.shared.get(key);
      if (hit) return hit;
      const loaded = load();
      return loaded ? this.shared.put(key, loaded) : null;
    });
    if (!rows) return null;
    const nearest = new Int8Nearest(new Int8Array(q.buffer, q.byteOffset, dims), k);
    for (const r of rows) nearest.add(r.vectors, r.size, r.validity, r.inPlace ?? null);
    return nearest.best().map((n) => ({ id: Number(rows[n.block]!.rowids.readBigInt64LE(n.slot * 8)), distance: Math.sqrt(n.l2sq) }));
  }

  /**
   * The key under which other connections may serve this version's chunks, null when they must not
   * (the version's vectors are not complete, or it has none). Read in the caller's snapshot. Why it
   * names one immutable partition:
   * - `vectors_embedder` is set (VectorStore.markComplete) only on a served version none of whose
   *   snippets lacks a vector; snippets are only added to versions being built, the re-embed job only
   *   writes snippets without a vector, and LibraryStore.deleteVersion clears the marker before it
   *   deletes any row. So while the marker is set the partition does not change.
   * - Recreating the vector table (an embedder change) bumps the schema cookie (and clears the markers).
   * - Version ids can be reused (library_versions.id is no AUTOINCREMENT), but a partition's chunk ids
   *   come from the chunks table's AUTOINCREMENT sequence, never reused while the table lives, and a
   *   version row is only ever deleted after its vector rows (LibraryStore.deleteVersion,
   *   deleteVersionRows), which deletes its chunks (sqlite-vec 0.1.x drops a chunk once empty): a new
   *   partition under an old id has another first chunk.
   * - The query's dimension, so a float table of another layout never matches.
   */
  private sharedKey(stmt: Statement, versionId: number, dims: number): string | null {
    // The first chunk id is found by scanning the chunks table (sqlite-vec indexes no partition),
    // about 20 us a search at 1M snippets: the parts are read again only after a commit, which
    // changes the stamp (read in the same snapshot, as the chunk cache does).
    const stamp = this.stampStmt.get() as string;
    if (stamp !== this.keyStamp) {
      this.keyParts.clear();
      this.keyStamp = stamp;
    }
    let r = this.keyParts.get(versionId);
    if (r === undefined) {
      r = (stmt.get(versionId) as { marker: string | null; schema: number; first: number | null } | undefined) ?? null;
      this.keyParts.set(versionId, r);
    }
    if (!r || r.marker === null || r.first === null) return null;
    return `${versionId}:${r.first}:${r.schema}:${dims}:${r.marker}`;
  }

  /** Ids of the snippets of one page (source URL without its #anchor) in a version, in page order. */
  page(versionId: number, pageUrl: string, limit = 200): number[] {
    // '$' follows '#' in code order, so [page, page$) holds the page and its page#anchor rows (and nothing a URL would contain).
    return (this.pageStmt.all(versionId, pageUrl, `${pageUrl}$`, limit) as { id: number }[]).map((r) => r.id);
  }
}
