import { Int8Nearest } from '../../../lib/vector/int8-l2.ts';
import { int8Unit } from '../../../lib/vector/quantize.ts';
import type { SearchStore, VectorHit } from '../search.ts';
import { sectionKey, type SectionRef } from '../version-reads.ts';
import { HNSW_EF_SEARCH, type PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { named, inTransaction, pgQuery, withSnapshot, withTransaction } from './transaction.ts';

/** How many vectors the kernel scores per call (sqlite-vec's chunk size: the kernel's buffer is sized for blocks like it). */
const BLOCK = 1024;

/** One version's 8-bit vectors as the kernel scans them: ids in the order of their vectors, laid end to end. */
interface VersionVectors {
  ids: number[];
  vectors: Buffer;
  bytes: number;
}

/**
 * The fallback's per-node cache of versions' vectors, least recently used out first once
 * `budget` bytes is reached (0: none). Keys name one immutable set of vectors (PgSearchStore.cacheKey
 * says why), so nothing has to empty it: a version swapped out or re-embedded is read under a new key
 * and its old entry ages out.
 */
class VersionVectorCache {
  private readonly entries = new Map<string, VersionVectors>();
  private bytes = 0;

  constructor(readonly budget: number) {}

  get(key: string): VersionVectors | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    // Map order is recency order: move it to the end.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  put(key: string, v: VersionVectors): void {
    if (v.bytes > this.budget) return;
    for (const [old, e] of this.entries) {
      if (this.bytes + v.bytes <= this.budget) break;
      this.entries.delete(old);
      this.bytes -= e.bytes;
    }
    this.entries.set(key, v);
    this.bytes += v.bytes;
  }

  get heldBytes(): number {
    return this.bytes;
  }
}

/** What a request reads first about a version, in one statement (versionState): what its stages and knn() ask of it. */
export interface VersionRow {
  createdAt: string;
  state: string;
  /** The embedder whose vectors the version has complete (vectors_embedder), null while they are not. */
  marker: string | null;
  /** snippet_vec's file: TRUNCATE (PgVectorStore.ensure for a new embedder) gives it a new one. */
  filenode: string;
  /** The pgvector column's dimension, null without one. */
  knnDims: number | null;
  /** When the version's ranking model was stored, null without one (PgSearchModelStore.builtAt). */
  modelBuiltAt: string | null;
  /** How many snippets the version holds (library_versions.total_snippets): how many vectors knn would scan. */
  snippets: number;
}

/** What a request's stages ask of a version (PgSearchStore.versionState). */
export interface VersionState {
  key: string;
  ready: boolean;
  vectorsReady: boolean;
  row: VersionRow;
}

function stateOf(versionId: number, row: VersionRow): VersionState {
  return { key: `${versionId}@${row.createdAt}`, ready: row.state === 'ready', vectorsReady: row.marker !== null, row };
}

/**
 * Versions of at most this many snippets are scanned by the node from its cache even when the
 * server has pgvector: at that size the int8 kernel over cached vectors takes a fraction of a
 * millisecond and is exact, while PostgreSQL reads and sorts the version's rows (its planner rightly
 * prefers that to the HNSW index for a small share of the index) in about two. HNSW answers larger ones.
 */
const NODE_SCAN_MAX_SNIPPETS = 20_000;

/**
 * The read side of retrieval on PostgreSQL, method for method SQLite's SearchStore
 * (server/store/search.ts): read snapshots, vector candidates of one library version, pages. The
 * nearest neighbours come from the node: the version's 8-bit vectors (snippet_vec, the bytes
 * sqlite-vec holds) scored with the int8 kernel, as SearchStore.scan scores sqlite-vec's chunks, and
 * kept in a per-node cache; or, when the server has pgvector (PgVectorStore adds the `knn halfvec`
 * column), from its HNSW index for versions too large for that (scansInNode). Both measure the L2
 * distance of the 8-bit vectors, as on SQLite.
 */
export class PgSearchStore implements SameShape<SearchStore> {
  private readonly cache: VersionVectorCache;
  /** Versions read out of PostgreSQL by the fallback scan (what the tests check). */
  loads = 0;

  /** `vectorCacheBytes`: memory for the vectors of recently searched versions, when the server has no pgvector (default none). */
  constructor(
    private readonly pool: PgPool,
    options: { vectorCacheBytes?: number } = {},
  ) {
    this.cache = new VersionVectorCache(options.vectorCacheBytes ?? 0);
  }

  /** The first code snippet of a section (`URL#anchor`, its repeats `URL#anchor~2`...), or null. */
  async sectionCode(versionId: number, section: string): Promise<number | null> {
    // The range in byte order (COLLATE "C"), as SQLite compares text: '\u007f' sorts after every URL character.
    const { rows } = await pgQuery<{ id: number; sourceId: string }>(
      this.pool,
      named(`SELECT id, source_id AS "sourceId" FROM snippets
       WHERE version_id = $1 AND source_id COLLATE "C" >= $2 AND source_id COLLATE "C" < $3 AND kind = 'code' ORDER BY position, id LIMIT 20`),
      [versionId, section, `${section}\u007f`],
    );
    return rows.find((r) => r.sourceId === section || /^~\d+$/.test(r.sourceId.slice(section.length)))?.id ?? null;
  }

  /** sectionCode of each section, in one statement (a round trip each was most of the context step's reads). */
  async sectionCodes(sections: readonly SectionRef[]): Promise<Map<string, number | null>> {
    const out = new Map<string, number | null>();
    if (sections.length === 0) return out;
    const { rows } = await pgQuery<{ at: number; id: number; sourceId: string }>(
      this.pool,
      named(`SELECT w.at::int AS at, s.id, s.source_id AS "sourceId"
       FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS w(version_id, section, at)
       CROSS JOIN LATERAL (SELECT id, source_id, position FROM snippets
         WHERE version_id = w.version_id AND source_id COLLATE "C" >= w.section AND source_id COLLATE "C" < w.section || chr(127) AND kind = 'code'
         ORDER BY position, id LIMIT 20) s
       ORDER BY w.at, s.position, s.id`),
      [sections.map((r) => r.versionId), sections.map((r) => r.section)],
    );
    for (const [i, r] of sections.entries()) {
      const mine = rows.filter((row) => row.at === i + 1);
      out.set(sectionKey(r), mine.find((m) => m.sourceId === r.section || /^~\d+$/.test(m.sourceId.slice(r.section.length)))?.id ?? null);
    }
    return out;
  }

  /**
   * Runs fn inside one read snapshot (a REPEATABLE READ READ ONLY transaction on one connection,
   * transaction.ts withSnapshot): every statement of these stores that fn sends sees the same state of
   * the database, as inside SQLite's read transaction. Unlike SQLite's, fn may await.
   */
  snapshot<T>(fn: () => T | Promise<T>): Promise<T> {
    return withSnapshot(this.pool, fn);
  }

  /**
   * What the per-version stage asks first of a version, in one statement: its term-index key and
   * state (PgTermStore.versionKey), whether its vectors are complete (vectorsReady), and in `row`
   * what knn needs to find them (knnOf) and its model's time; null when there is no such version.
   * A request reads it once per version (pgRequestReads).
   */
  async versionState(versionId: number): Promise<VersionState | null> {
    return (await this.versionStates([versionId])).get(versionId) ?? null;
  }

  /** versionState of several versions in one statement; a missing version is absent. */
  async versionStates(versionIds: readonly number[]): Promise<Map<number, VersionState>> {
    return new Map([...(await this.versionRows(versionIds))].map(([id, row]) => [id, stateOf(id, row)]));
  }

  async vectorsReady(versionId: number): Promise<boolean> {
    const { rows } = await pgQuery<{ ready: boolean }>(this.pool, named('SELECT vectors_embedder IS NOT NULL AS ready FROM library_versions WHERE id = $1'), [
      versionId,
    ]);
    return rows[0]?.ready === true;
  }

  /**
   * Nearest neighbours among the version's 8-bit vectors by L2 distance, nearest first (ties by id);
   * [] when the version has none of the query's dimension. The exact scan of the node (scan), or
   * pgvector's HNSW index (approximate, as any HNSW search) for a version too large for it (scansInNode).
   */
  async knn(versionId: number, query: Float32Array, k: number): Promise<VectorHit[]> {
    const info = await this.info(versionId);
    return info ? this.knnOf(info, versionId, query, k) : [];
  }

  /** knn with the version's row already read in this snapshot (versionState), which saves its round trip. */
  async knnOf(info: VersionRow, versionId: number, query: Float32Array, k: number): Promise<VectorHit[]> {
    const q = int8Unit(query);
    if (info.knnDims === q.length && !this.scansInNode(info, q.length)) return this.hnsw(versionId, q, k);
    return (await this.scanWith(info, versionId, q, k)) ?? [];
  }

  /**
   * Whether the node scans a version it could ask pgvector about: a small one (NODE_SCAN_MAX_SNIPPETS)
   * with complete vectors (so cached under a key) that takes at most a quarter of the cache.
   */
  private scansInNode(info: VersionRow, dims: number): boolean {
    return info.marker !== null && info.snippets <= NODE_SCAN_MAX_SNIPPETS && info.snippets * (dims + 8) * 4 <= this.cache.budget;
  }

  /**
   * The exact KNN of the node: the version's vectors (from the cache, or read in id order) scored by
   * the int8 kernel (lib/vector/int8-l2.ts), ties to the lower id as sqlite-vec's chunks keep them.
   * null when a stored vector has another dimension than the query (an embedder change under way).
   */
  async scan(versionId: number, q: Buffer, k: number): Promise<VectorHit[] | null> {
    const info = await this.info(versionId);
    return info ? this.scanWith(info, versionId, q, k) : [];
  }

  /** Ids of the snippets of one page (source URL without its #anchor) in a version, in page order. */
  async page(versionId: number, pageUrl: string, limit = 200): Promise<number[]> {
    // '$' follows '#' in byte order, so [page, page$) holds the page and its page#anchor rows.
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      named('SELECT id FROM snippets WHERE version_id = $1 AND source_id COLLATE "C" >= $2 AND source_id COLLATE "C" < $3 ORDER BY position, id LIMIT $4'),
      [versionId, pageUrl, `${pageUrl}$`, limit],
    );
    return rows.map((r) => r.id);
  }

  /** Bytes of vectors the fallback's cache holds (tests). */
  get cachedBytes(): number {
    return this.cache.heldBytes;
  }

  private async info(versionId: number): Promise<VersionRow | null> {
    return (await this.versionRows([versionId])).get(versionId) ?? null;
  }

  /** The rows versionState reads, of several versions in one statement (a search of several libraries), by version; a missing version is absent. */
  async versionRows(versionIds: readonly number[]): Promise<Map<number, VersionRow>> {
    if (versionIds.length === 0) return new Map();
    const { rows } = await pgQuery<VersionRow & { id: number }>(
      this.pool,
      named(`SELECT v.id, v.created_at AS "createdAt", v.state, v.vectors_embedder AS marker, pg_relation_filenode('snippet_vec')::text AS filenode,
         (SELECT atttypmod FROM pg_attribute WHERE attrelid = 'snippet_vec'::regclass AND attname = 'knn' AND NOT attisdropped) AS "knnDims",
         (SELECT built_at FROM search_models m WHERE m.version_id = v.id) AS "modelBuiltAt", v.total_snippets AS snippets
       FROM library_versions v WHERE v.id = ANY($1::bigint[])`),
      [[...new Set(versionIds)]],
    );
    return new Map(rows.map(({ id, ...row }) => [id, row]));
  }

  /**
   * pgvector's HNSW search restricted to one version, with the connection's settings (pool.ts
   * SESSION_SETTINGS: iterative scans, a candidate list of HNSW_EF_SEARCH); a longer list than that,
   * when more rows are asked, is set for the transaction (the snapshot's, or one of its own). The
   * rows may come slightly out of order (relaxed_order), so they are sorted here.
   */
  private async hnsw(versionId: number, q: Buffer, k: number): Promise<VectorHit[]> {
    const literal = `[${[...new Int8Array(q.buffer, q.byteOffset, q.length)].join(',')}]`;
    const nearest = async () => {
      const { rows } = await pgQuery<{ id: number; distance: number }>(
        this.pool,
        'SELECT snippet_id AS id, knn <-> $1::halfvec AS distance FROM snippet_vec WHERE version_id = $2 ORDER BY knn <-> $1::halfvec LIMIT $3',
        [literal, versionId, k],
      );
      return rows.sort((a, b) => a.distance - b.distance || a.id - b.id);
    };
    if (k <= HNSW_EF_SEARCH) return nearest();
    const run = async () => {
      await pgQuery(this.pool, "SELECT set_config('hnsw.ef_search', $1, true)", [String(k)]);
      return nearest();
    };
    return inTransaction(this.pool) ? run() : withTransaction(this.pool, run);
  }

  private async scanWith(info: VersionRow, versionId: number, q: Buffer, k: number): Promise<VectorHit[] | null> {
    const dims = q.length;
    const key = cacheKey(versionId, info, dims);
    let v = key === null ? undefined : this.cache.get(key);
    if (!v) {
      const loaded = await this.load(versionId, dims);
      if (!loaded) return null;
      v = loaded;
      if (key !== null) this.cache.put(key, v);
    }
    if (v.ids.length === 0) return [];
    const nearest = new Int8Nearest(new Int8Array(q.buffer, q.byteOffset, dims), k);
    for (let at = 0; at < v.ids.length; at += BLOCK) {
      const n = Math.min(BLOCK, v.ids.length - at);
      nearest.add(v.vectors.subarray(at * dims, (at + n) * dims), n);
    }
    return nearest.best().map((h) => ({ id: v.ids[h.block * BLOCK + h.slot]!, distance: Math.sqrt(h.l2sq) }));
  }

  /** A version's vectors in id order, in one row (one bytea, one array: a row per vector cost a message each). */
  private async load(versionId: number, dims: number): Promise<VersionVectors | null> {
    this.loads++;
    const { rows } = await pgQuery<{ ids: (number | string)[] | null; vectors: Buffer | null; ok: boolean | null }>(
      this.pool,
      `SELECT array_agg(snippet_id ORDER BY snippet_id) AS ids, string_agg(embedding, ''::bytea ORDER BY snippet_id) AS vectors,
         bool_and(length(embedding) = $2) AS ok
       FROM snippet_vec WHERE version_id = $1`,
      [versionId, dims],
    );
    const r = rows[0];
    if (!r?.ids || !r.vectors) return { ids: [], vectors: Buffer.alloc(0), bytes: 0 };
    if (!r.ok) return null;
    // bigint[] comes back as strings (pool.ts parses only the scalar INT8).
    const ids = r.ids.map(Number);
    return { ids, vectors: r.vectors, bytes: r.vectors.length + ids.length * 8 };
  }
}

/**
 * The key under which the node keeps a version's vectors, null when it must not (they are not
 * complete). Read with the info of the same statement, so in the caller's snapshot. Why it names one
 * immutable set of vectors (as SearchStore.sharedKey on SQLite):
 * - `vectors_embedder` is set (PgVectorStore.markComplete) only on a served version none of whose
 *   snippets lacks a vector; snippets are only added to versions being built, the re-embed job only
 *   writes snippets without a vector, and LibraryStore.deleteVersion clears the marker before it
 *   deletes any row. So while the marker is set the version's vectors do not change.
 * - An embedder change (PgVectorStore.ensure) truncates snippet_vec, which gives the table a new file:
 *   vectors filled again under the same marker have another filenode.
 * - Version ids come from an identity and are not reused; the creation time guards an id given
 *   explicitly (a copied instance).
 * - The query's dimension, so stored vectors of another dimension never match.
 */
function cacheKey(versionId: number, info: VersionRow, dims: number): string | null {
  if (info.marker === null) return null;
  return `${versionId}@${info.createdAt}:${info.filenode}:${dims}:${info.marker}`;
}
