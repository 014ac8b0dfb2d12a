import type { Db } from './db.ts';

export interface DeclaredRow {
  libraryId: string;
  kind: string;
  spec: Record<string, unknown>;
  fingerprint: string;
  schedule: string | null;
  /** The reconcile created the library (so it deletes it when the file drops it). */
  created: boolean;
  jobId: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface Row {
  library_id: string;
  kind: string;
  spec_json: string;
  fingerprint: string;
  schedule: string | null;
  created: number;
  job_id: number | null;
  created_at: string;
  updated_at: string;
}

export const toRow = (r: Row): DeclaredRow => ({
  libraryId: r.library_id,
  kind: r.kind,
  spec: JSON.parse(r.spec_json) as Record<string, unknown>,
  fingerprint: r.fingerprint,
  schedule: r.schedule,
  created: r.created === 1,
  jobId: r.job_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** What the last reconcile of sources.yaml applied, per library (migration 015). */
export class DeclaredStore {
  constructor(private readonly db: Db) {}

  async list(): Promise<DeclaredRow[]> {
    return (this.db.prepare('SELECT * FROM declared_sources ORDER BY library_id').all() as Row[]).map(toRow);
  }

  async get(libraryId: string): Promise<DeclaredRow | null> {
    const r = this.db.prepare('SELECT * FROM declared_sources WHERE library_id = ?').get(libraryId) as Row | undefined;
    return r ? toRow(r) : null;
  }

  /** Records an entry as applied; `created` is kept from the first time (an adopted library never becomes one the file created). */
  async put(row: Omit<DeclaredRow, 'createdAt' | 'updatedAt'>, now: string): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO declared_sources (library_id, kind, spec_json, fingerprint, schedule, created, job_id, created_at, updated_at)
         VALUES (@libraryId, @kind, @spec, @fingerprint, @schedule, @created, @jobId, @now, @now)
         ON CONFLICT (library_id) DO UPDATE SET kind = excluded.kind, spec_json = excluded.spec_json, fingerprint = excluded.fingerprint,
           schedule = excluded.schedule, job_id = coalesce(excluded.job_id, job_id), updated_at = excluded.updated_at`,
      )
      .run({ ...row, spec: JSON.stringify(row.spec), created: row.created ? 1 : 0, now });
  }

  async delete(libraryId: string): Promise<void> {
    this.db.prepare('DELETE FROM declared_sources WHERE library_id = ?').run(libraryId);
  }
}
