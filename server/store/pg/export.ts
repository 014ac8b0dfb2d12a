import type { Library } from '../../../lib/model.ts';
import type { ExportReads, ExportRow, ExportVersion } from '../export.ts';
import { toLibrary, type LibraryRow } from '../libraries.ts';
import { LIBRARY_SELECT } from './libraries.ts';
import type { PgPool } from './pool.ts';
import type { PgClient } from './transaction.ts';

/**
 * An export's read snapshot on PostgreSQL, SQLite's ExportSnapshot statement for statement: one
 * connection of the pool in a REPEATABLE READ READ ONLY transaction from open() to close(), so a
 * library swapped in or deleted meanwhile is exported whole as it was. Not withSnapshot: the
 * snapshot outlives the call that opens it (the bundle is streamed page by page to its reader).
 */
export class PgExportSnapshot implements ExportReads {
  private open = true;

  private constructor(private readonly client: PgClient) {}

  static async open(pool: PgPool): Promise<PgExportSnapshot> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    return new PgExportSnapshot(client);
  }

  async library(id: string): Promise<Library | null> {
    const { rows } = await this.client.query<LibraryRow>(`${LIBRARY_SELECT} WHERE l.id = $1`, [id]);
    return rows[0] ? toLibrary(rows[0]) : null;
  }

  async servedVersions(libraryId: string): Promise<ExportVersion[]> {
    const { rows } = await this.client.query<ExportVersion>(
      `SELECT id, tag, total_snippets AS "totalSnippets", total_tokens AS "totalTokens" FROM library_versions
       WHERE library_id = $1 AND is_current = 1 AND state = 'ready' ORDER BY tag COLLATE "C"`,
      [libraryId],
    );
    return rows;
  }

  async snippets(versionId: number, kind: 'code' | 'info', afterId: number, limit: number): Promise<ExportRow[]> {
    const { rows } = await this.client.query<ExportRow>(
      `SELECT id, kind, source_id AS "sourceId", title, description, language, page_title AS "pageTitle", breadcrumb, content, code_list_json AS "codeList",
         tokens, is_dynamic AS "isDynamic", source_file AS "sourceFile"
       FROM snippets WHERE version_id = $1 AND kind = $2 AND id > $3 ORDER BY id LIMIT $4`,
      [versionId, kind, afterId, limit],
    );
    return rows;
  }

  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    // A connection whose ROLLBACK failed is broken: destroyed rather than returned to the pool.
    let broken: Error | undefined;
    await this.client.query('ROLLBACK').catch((err: unknown) => {
      broken = err instanceof Error ? err : new Error(String(err));
    });
    this.client.release(broken);
  }
}
