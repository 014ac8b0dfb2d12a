import type { SearchModelStore, StoredModel } from '../search-models.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { named, pgQuery } from './transaction.ts';

/** The ranking model learned per library version on PostgreSQL: method for method SQLite's SearchModelStore (server/store/search-models.ts). */
export class PgSearchModelStore implements SameShape<SearchModelStore> {
  constructor(private readonly pool: PgPool) {}

  async get(versionId: number): Promise<StoredModel | null> {
    const { rows } = await pgQuery<StoredModel>(this.pool, named('SELECT format, built_at AS "builtAt", model FROM search_models WHERE version_id = $1'), [
      versionId,
    ]);
    return rows[0] ?? null;
  }

  async builtAt(versionId: number): Promise<string | null> {
    const { rows } = await pgQuery<{ builtAt: string }>(this.pool, named('SELECT built_at AS "builtAt" FROM search_models WHERE version_id = $1'), [versionId]);
    return rows[0]?.builtAt ?? null;
  }

  /** When each version's model was stored, in one statement (the catalogue asks for every served version at once); versions without one are absent. */
  async builtAtOf(versionIds: number[]): Promise<Map<number, string>> {
    const { rows } = await pgQuery<{ versionId: number; builtAt: string }>(
      this.pool,
      named('SELECT version_id AS "versionId", built_at AS "builtAt" FROM search_models WHERE version_id = ANY($1::bigint[])'),
      [versionIds],
    );
    return new Map(rows.map((r) => [r.versionId, r.builtAt]));
  }

  /** One statement, as SQLite's INSERT OR REPLACE: readers see the old model or the new one, never a mix. */
  async put(versionId: number, format: number, model: string, builtAt: string): Promise<void> {
    await pgQuery(
      this.pool,
      `INSERT INTO search_models (version_id, format, built_at, model) VALUES ($1, $2, $3, $4)
       ON CONFLICT (version_id) DO UPDATE SET format = excluded.format, built_at = excluded.built_at, model = excluded.model`,
      [versionId, format, builtAt, model],
    );
  }

  async missing(format: number): Promise<number[]> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      `SELECT v.id FROM library_versions v LEFT JOIN search_models m ON m.version_id = v.id
       WHERE v.is_current = 1 AND v.state = 'ready' AND (m.version_id IS NULL OR m.format <> $1) ORDER BY v.id`,
      [format],
    );
    return rows.map((r) => r.id);
  }
}
