import type { Db } from './db.ts';
import { blobOf } from './blobs.ts';
import { int8Unit } from '../../lib/vector/quantize.ts';

/**
 * The sqlite-vec table: each snippet's embedding in 8 bits (lib/vector/quantize.ts), partitioned
 * by library version, for KNN; the float embedding is kept in the snippet row. Its dimension
 * follows the embedder, so it is created at startup rather than by a migration; meta.embedder
 * records which embedder filled it. When the embedder changes, the table is recreated empty and a
 * re-embed job fills it (and the float copies) again.
 */
export class VectorStore {
  readonly table = 'snippet_vec';

  constructor(private readonly db: Db) {}

  /** Ensures the table matches the embedder. Returns true when it was (re)created and must be filled. */
  async ensure(embedderId: string, dims: number): Promise<boolean> {
    const stored = this.db.prepare("SELECT value FROM meta WHERE key = 'embedder'").get() as { value: string } | undefined;
    const exists = this.db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(this.table) !== undefined;
    // ':int8' (the 8-bit table, see lib/vector/quantize.ts): a float table of an older version is rebuilt by a re-embed job.
    const wanted = `${embedderId}:${dims}:int8`;
    if (exists && stored?.value === wanted) return false;
    this.db.transaction(() => {
      if (exists) this.db.exec(`DROP TABLE ${this.table}`);
      // The copies in the snippet rows belong to the old embedder; the re-embed job writes both again.
      this.db.exec('UPDATE snippets SET embedding = NULL WHERE embedding IS NOT NULL');
      this.db.exec('UPDATE library_versions SET vectors_embedder = NULL');
      this.db.exec(`CREATE VIRTUAL TABLE ${this.table} USING vec0(version_id integer partition key, embedding int8[${dims}] distance_metric=l2)`);
      this.db.prepare("INSERT INTO meta (key, value) VALUES ('embedder', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(wanted);
    })();
    return exists || this.hasSnippets();
  }

  private hasSnippets(): boolean {
    return this.db.prepare('SELECT 1 FROM snippets LIMIT 1').get() !== undefined;
  }

  /**
   * Stores vectors for existing snippets in one transaction (the re-embed job). Snippets deleted
   * meanwhile (a version swapped out during the job) are skipped. Returns how many were stored.
   */
  async upsertBatch(items: { id: number; versionId: number; vector: Float32Array }[]): Promise<number> {
    const exists = this.db.prepare('SELECT version_id AS versionId FROM snippets WHERE id = ?');
    const del = this.db.prepare(`DELETE FROM ${this.table} WHERE rowid = ?`);
    const ins = this.db.prepare(`INSERT INTO ${this.table} (rowid, version_id, embedding) VALUES (?, ?, vec_int8(?))`);
    const copy = this.db.prepare('UPDATE snippets SET embedding = ? WHERE id = ?');
    return this.db.transaction(() => {
      let stored = 0;
      for (const it of items) {
        const row = exists.get(it.id) as { versionId: number } | undefined;
        if (!row) continue;
        del.run(BigInt(it.id));
        ins.run(BigInt(it.id), BigInt(row.versionId), int8Unit(it.vector));
        copy.run(blobOf(it.vector), it.id);
        stored++;
      }
      return stored;
    })();
  }

  /**
   * Marks a served version's vectors complete for the embedder when none of its snippets lacks one;
   * from then on searches use them. A version still being built is never marked: it may grow.
   */
  async markComplete(versionId: number): Promise<boolean> {
    return this.markCompleteNow(versionId);
  }

  private markCompleteNow(versionId: number): boolean {
    const embedder = this.embedderOfTable();
    if (!embedder) return false;
    const r = this.db
      .prepare(
        `UPDATE library_versions SET vectors_embedder = ? WHERE id = ? AND state = 'ready' AND vectors_embedder IS NULL
           AND NOT EXISTS (SELECT 1 FROM snippets s WHERE s.version_id = library_versions.id AND NOT EXISTS (SELECT 1 FROM ${this.table} v WHERE v.rowid = s.id))`,
      )
      .run(embedder, versionId);
    return r.changes > 0;
  }

  /** markComplete for every served version not marked yet (startup: versions stored before the flag existed). */
  async markAllComplete(): Promise<number[]> {
    const ids = this.db.prepare("SELECT id FROM library_versions WHERE state = 'ready' AND vectors_embedder IS NULL").pluck().all() as number[];
    return ids.filter((id) => this.markCompleteNow(id));
  }

  /** Served versions whose vectors are complete, and those still waiting for the embed job (/api/health). */
  async versionCounts(): Promise<{ embedded: number; pending: number }> {
    return this.db
      .prepare("SELECT count(vectors_embedder) AS embedded, count(*) - count(vectors_embedder) AS pending FROM library_versions WHERE state = 'ready'")
      .get() as { embedded: number; pending: number };
  }

  /** Which embedder filled the vector table (`id:dims:int8`), null without one. */
  async filledBy(): Promise<string | null> {
    return this.embedderOfTable();
  }

  private embedderOfTable(): string | null {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'embedder'").get() as { value: string } | undefined;
    const exists = this.db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(this.table) !== undefined;
    return row && exists ? row.value : null;
  }

  /** How many snippets have no vector (progress total of the re-embed job). */
  async missingCount(): Promise<number> {
    return (
      this.db.prepare(`SELECT count(*) AS n FROM snippets s WHERE NOT EXISTS (SELECT 1 FROM ${this.table} v WHERE v.rowid = s.id)`).get() as { n: number }
    ).n;
  }

  /** Snippets without a vector, in id order, for the re-embed job. */
  async missing(afterId: number, limit: number): Promise<{ id: number; versionId: number }[]> {
    return this.db
      .prepare(
        `SELECT s.id AS id, s.version_id AS versionId FROM snippets s WHERE s.id > ? AND NOT EXISTS (SELECT 1 FROM ${this.table} v WHERE v.rowid = s.id) ORDER BY s.id LIMIT ?`,
      )
      .all(afterId, limit) as { id: number; versionId: number }[];
  }
}
