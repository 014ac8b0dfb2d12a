import { int8Unit } from '../../../lib/vector/quantize.ts';
import { blobOf } from '../blobs.ts';
import type { VectorStore } from '../vectors.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery, withTransaction } from './transaction.ts';

/** The advisory lock of ensure(): nodes starting together with a new embedder reset the table once. */
const VECTOR_LOCK = 0x5374_6176; // "Stav"

/** pgvector's HNSW index takes halfvec columns of at most this many dimensions. */
const HNSW_MAX_DIMS = 4000;

/**
 * Each snippet's 8-bit embedding on PostgreSQL, method for method SQLite's VectorStore
 * (server/store/vectors.ts). The bytes live in `snippet_vec.embedding` (migration 002) on any server:
 * they are the truth, the same bytes sqlite-vec holds, and the node can compute neighbours from them
 * with its int8 kernel. When the server has pgvector, ensure() adds a `knn halfvec(dims)` column with
 * an HNSW index (L2), filled from the bytes by a trigger, so writers never need to know whether it
 * exists: an int8 value is exact in half precision, so its distances are those of sqlite-vec's int8
 * L2. Without pgvector the column is simply absent; a later ensure() on a server that has gained it
 * adds and fills it from the bytes. `meta.embedder` records the embedder, as on SQLite.
 */
export class PgVectorStore implements SameShape<VectorStore> {
  readonly table = 'snippet_vec';

  constructor(private readonly pool: PgPool) {}

  /** Ensures the table matches the embedder. Returns true when it was reset and must be filled. */
  async ensure(embedderId: string, dims: number): Promise<boolean> {
    const wanted = `${embedderId}:${dims}:int8`;
    return withTransaction(this.pool, async () => {
      await pgQuery(this.pool, 'SELECT pg_advisory_xact_lock($1)', [VECTOR_LOCK]);
      const stored = await this.filledBy();
      if (stored === wanted) {
        if ((await this.knnDims()) === null) await this.addKnn(dims, true);
        return false;
      }
      await pgQuery(this.pool, 'TRUNCATE snippet_vec');
      await this.dropKnn();
      // The copies in the snippet rows belong to the old embedder; the re-embed job writes both again.
      await pgQuery(this.pool, 'UPDATE snippets SET embedding = NULL WHERE embedding IS NOT NULL');
      await pgQuery(this.pool, 'UPDATE library_versions SET vectors_embedder = NULL');
      await this.addKnn(dims, false);
      await pgQuery(this.pool, "INSERT INTO meta (key, value) VALUES ('embedder', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [wanted]);
      if (stored !== null) return true;
      return (await pgQuery(this.pool, 'SELECT 1 FROM snippets LIMIT 1')).rows.length > 0;
    });
  }

  /** Removes the pgvector column (the bytes stay), before vectors of another dimension are stored; ensure() adds it again. */
  async dropKnn(): Promise<void> {
    // The trigger outlives the column it fills: both go.
    await pgQuery(this.pool, 'DROP TRIGGER IF EXISTS snippet_vec_knn ON snippet_vec');
    await pgQuery(this.pool, 'ALTER TABLE snippet_vec DROP COLUMN IF EXISTS knn');
  }

  /** The dimension of the pgvector column, null without one. */
  async knnDims(): Promise<number | null> {
    const { rows } = await pgQuery<{ dims: number }>(
      this.pool,
      "SELECT atttypmod AS dims FROM pg_attribute WHERE attrelid = 'snippet_vec'::regclass AND attname = 'knn' AND NOT attisdropped",
    );
    return rows[0]?.dims ?? null;
  }

  /**
   * Adds the pgvector column, its trigger and its HNSW index when the server has pgvector (and this
   * role may create the extension: a refusal leaves the bytes alone, in a savepoint); `fill` computes
   * it for the rows already stored.
   */
  private async addKnn(dims: number, fill: boolean): Promise<void> {
    if (dims > HNSW_MAX_DIMS) return;
    const { rows } = await pgQuery<{ installed: boolean; available: boolean }>(
      this.pool,
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available`,
    );
    if (!rows[0].available) return;
    if (!rows[0].installed) {
      const created = await withTransaction(this.pool, async () => {
        await pgQuery(this.pool, 'CREATE EXTENSION IF NOT EXISTS vector');
        return true;
      }).catch(() => false);
      if (!created) return;
    }
    await pgQuery(this.pool, `ALTER TABLE snippet_vec ADD COLUMN knn halfvec(${dims})`);
    // An int8 byte as a signed integer: shifted to the top of an int4 and back.
    await pgQuery(
      this.pool,
      `CREATE OR REPLACE FUNCTION snippet_vec_knn() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         NEW.knn := ARRAY(SELECT ((get_byte(NEW.embedding, i) << 24) >> 24)::real FROM generate_series(0, length(NEW.embedding) - 1) AS i)::halfvec;
         RETURN NEW;
       END $$`,
    );
    await pgQuery(
      this.pool,
      'CREATE TRIGGER snippet_vec_knn BEFORE INSERT OR UPDATE OF embedding ON snippet_vec FOR EACH ROW EXECUTE FUNCTION snippet_vec_knn()',
    );
    if (fill) await pgQuery(this.pool, 'UPDATE snippet_vec SET embedding = embedding');
    await pgQuery(this.pool, 'CREATE INDEX snippet_vec_knn ON snippet_vec USING hnsw (knn halfvec_l2_ops)');
  }

  /**
   * Stores vectors for existing snippets in one transaction (the re-embed job); snippets deleted
   * meanwhile are skipped. Returns how many were stored. Within one batch the last vector of an id
   * wins, as SQLite's row-by-row replace leaves it.
   */
  async upsertBatch(items: { id: number; versionId: number; vector: Float32Array }[]): Promise<number> {
    if (items.length === 0) return 0;
    const last = new Map<number, Float32Array>();
    for (const it of items) last.set(it.id, it.vector);
    const ids = [...last.keys()];
    const int8 = ids.map((id) => int8Unit(last.get(id)!));
    const floats = ids.map((id) => blobOf(last.get(id)!));
    return withTransaction(this.pool, async () => {
      const { rows } = await pgQuery<{ id: number }>(
        this.pool,
        `WITH u AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::int[], $5::int[]) AS u(id, ioff, ilen, foff, flen)),
         v AS (INSERT INTO snippet_vec (snippet_id, version_id, embedding)
               SELECT s.id, s.version_id, substring($6::bytea FROM u.ioff + 1 FOR u.ilen) FROM u JOIN snippets s ON s.id = u.id
               ON CONFLICT (snippet_id) DO UPDATE SET version_id = excluded.version_id, embedding = excluded.embedding
               RETURNING snippet_id)
         UPDATE snippets s SET embedding = substring($7::bytea FROM u.foff + 1 FOR u.flen) FROM u, v WHERE s.id = u.id AND v.snippet_id = u.id
         RETURNING s.id`,
        [ids, ...offsets(int8), ...offsets(floats), Buffer.concat(int8), Buffer.concat(floats)],
      );
      const stored = new Set(rows.map((r) => r.id));
      return items.filter((it) => stored.has(it.id)).length;
    });
  }

  async markComplete(versionId: number): Promise<boolean> {
    const embedder = await this.filledBy();
    if (!embedder) return false;
    const r = await pgQuery(
      this.pool,
      `UPDATE library_versions SET vectors_embedder = $1 WHERE id = $2 AND state = 'ready' AND vectors_embedder IS NULL
         AND NOT EXISTS (SELECT 1 FROM snippets s WHERE s.version_id = library_versions.id AND NOT EXISTS (SELECT 1 FROM snippet_vec v WHERE v.snippet_id = s.id))`,
      [embedder, versionId],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async markAllComplete(): Promise<number[]> {
    const { rows } = await pgQuery<{ id: number }>(this.pool, "SELECT id FROM library_versions WHERE state = 'ready' AND vectors_embedder IS NULL ORDER BY id");
    const out: number[] = [];
    for (const r of rows) if (await this.markComplete(r.id)) out.push(r.id);
    return out;
  }

  async versionCounts(): Promise<{ embedded: number; pending: number }> {
    const { rows } = await pgQuery<{ embedded: number; pending: number }>(
      this.pool,
      "SELECT count(vectors_embedder) AS embedded, count(*) - count(vectors_embedder) AS pending FROM library_versions WHERE state = 'ready'",
    );
    return rows[0];
  }

  /** Which embedder filled the vector table (`id:dims:int8`), null without one (the table itself always exists here). */
  async filledBy(): Promise<string | null> {
    const { rows } = await pgQuery<{ value: string }>(this.pool, "SELECT value FROM meta WHERE key = 'embedder'");
    return rows[0]?.value ?? null;
  }

  async missingCount(): Promise<number> {
    const { rows } = await pgQuery<{ n: number }>(
      this.pool,
      'SELECT count(*) AS n FROM snippets s WHERE NOT EXISTS (SELECT 1 FROM snippet_vec v WHERE v.snippet_id = s.id)',
    );
    return rows[0].n;
  }

  async missing(afterId: number, limit: number): Promise<{ id: number; versionId: number }[]> {
    const { rows } = await pgQuery<{ id: number; versionId: number }>(
      this.pool,
      `SELECT s.id, s.version_id AS "versionId" FROM snippets s WHERE s.id > $1 AND NOT EXISTS (SELECT 1 FROM snippet_vec v WHERE v.snippet_id = s.id)
       ORDER BY s.id LIMIT $2`,
      [afterId, limit],
    );
    return rows;
  }
}

/** Offsets and lengths of buffers laid end to end (one binary parameter cut by substring). */
function offsets(bufs: Buffer[]): [number[], number[]] {
  const off: number[] = [];
  let at = 0;
  for (const b of bufs) {
    off.push(at);
    at += b.length;
  }
  return [off, bufs.map((b) => b.length)];
}
