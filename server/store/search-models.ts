import type Database from 'better-sqlite3';
import type { Db } from './db.ts';

type Statement = Database.Statement<unknown[], unknown>;

export interface StoredModel {
  format: number;
  builtAt: string;
  /** JSON of the model (server/search/learn.ts LearnedModel). */
  model: string;
}

/** The ranking model learned per library version (migration 010): one row per version, replaced whole. */
export class SearchModelStore {
  private readonly getStmt: Statement;
  private readonly putStmt: Statement;
  private readonly builtAtStmt: Statement;

  constructor(private readonly db: Db) {
    this.getStmt = db.prepare('SELECT format, built_at AS builtAt, model FROM search_models WHERE version_id = ?');
    this.putStmt = db.prepare('INSERT OR REPLACE INTO search_models (version_id, format, built_at, model) VALUES (?, ?, ?, ?)');
    this.builtAtStmt = db.prepare('SELECT built_at AS builtAt FROM search_models WHERE version_id = ?');
  }

  get(versionId: number): StoredModel | null {
    return (this.getStmt.get(versionId) as StoredModel | undefined) ?? null;
  }

  /** When a version's model was stored, without reading the model (callers cache what they parsed by it). */
  builtAt(versionId: number): string | null {
    return (this.builtAtStmt.get(versionId) as { builtAt: string } | undefined)?.builtAt ?? null;
  }

  /** Stores a version's model in one statement: readers see the old one or the new one, never a mix. */
  async put(versionId: number, format: number, model: string, builtAt: string): Promise<void> {
    this.putStmt.run(versionId, format, builtAt, model);
  }

  /** Served versions whose model is missing or of another format (to learn at start-up). */
  async missing(format: number): Promise<number[]> {
    const rows = this.db
      .prepare(
        `SELECT v.id FROM library_versions v LEFT JOIN search_models m ON m.version_id = v.id
         WHERE v.is_current = 1 AND v.state = 'ready' AND (m.version_id IS NULL OR m.format != ?) ORDER BY v.id`,
      )
      .all(format) as { id: number }[];
    return rows.map((r) => r.id);
  }
}
