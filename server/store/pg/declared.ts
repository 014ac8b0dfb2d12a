import { toRow, type DeclaredRow, type DeclaredStore, type Row } from '../declared.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery } from './transaction.ts';

/** What the last reconcile of sources.yaml applied, per library, on PostgreSQL: method for method SQLite's DeclaredStore (server/store/declared.ts). */
export class PgDeclaredStore implements SameShape<DeclaredStore> {
  constructor(private readonly pool: PgPool) {}

  async list(): Promise<DeclaredRow[]> {
    return (await pgQuery<Row>(this.pool, 'SELECT * FROM declared_sources ORDER BY library_id COLLATE "C"')).rows.map(toRow);
  }

  async get(libraryId: string): Promise<DeclaredRow | null> {
    const { rows } = await pgQuery<Row>(this.pool, 'SELECT * FROM declared_sources WHERE library_id = $1', [libraryId]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Records an entry as applied; `created` is kept from the first time (an adopted library never becomes one the file created). */
  async put(row: Omit<DeclaredRow, 'createdAt' | 'updatedAt'>, now: string): Promise<void> {
    await pgQuery(
      this.pool,
      `INSERT INTO declared_sources AS d (library_id, kind, spec_json, fingerprint, schedule, created, job_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
       ON CONFLICT (library_id) DO UPDATE SET kind = excluded.kind, spec_json = excluded.spec_json, fingerprint = excluded.fingerprint,
         schedule = excluded.schedule, job_id = coalesce(excluded.job_id, d.job_id), updated_at = excluded.updated_at`,
      [row.libraryId, row.kind, JSON.stringify(row.spec), row.fingerprint, row.schedule, row.created ? 1 : 0, row.jobId, now],
    );
  }

  async delete(libraryId: string): Promise<void> {
    await pgQuery(this.pool, 'DELETE FROM declared_sources WHERE library_id = $1', [libraryId]);
  }
}
