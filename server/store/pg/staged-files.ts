import type { PgPool } from './pool.ts';
import { pgQuery, withTransaction } from './transaction.ts';

/** A staged file held by the database: its name (relative to a node's data dir), size and when it was stored. */
export interface StagedFileRow {
  name: string;
  size: number;
  created_at: string;
}

/**
 * The staged inputs of jobs on PostgreSQL (migration 005), for a node other than the one that took
 * the upload. A file is written in one transaction, so another node sees all of it or none; read
 * back one chunk per statement, so neither side ever holds more than a chunk.
 */
export class PgStagedFileStore {
  constructor(private readonly pool: PgPool) {}

  /** Stores `chunks` under `name`, replacing a file of that name (a retried upload). */
  async write(name: string, chunks: AsyncIterable<Buffer>, now: string): Promise<{ size: number; chunks: number }> {
    return withTransaction(this.pool, async (c) => {
      await c.query('DELETE FROM staged_files WHERE name = $1', [name]);
      const id = (await c.query<{ id: number }>('INSERT INTO staged_files (name, size, chunks, created_at) VALUES ($1, 0, 0, $2) RETURNING id', [name, now]))
        .rows[0]!.id;
      let size = 0;
      let seq = 0;
      for await (const chunk of chunks) {
        if (chunk.length === 0) continue;
        await c.query('INSERT INTO staged_file_chunks (file_id, seq, data) VALUES ($1, $2, $3)', [id, seq++, chunk]);
        size += chunk.length;
      }
      await c.query('UPDATE staged_files SET size = $2, chunks = $3 WHERE id = $1', [id, size, seq]);
      return { size, chunks: seq };
    });
  }

  /** The file's row, or null when no node stored it (or it was removed). */
  async get(name: string): Promise<StagedFileRow | null> {
    return (await pgQuery<StagedFileRow>(this.pool, 'SELECT name, size, created_at FROM staged_files WHERE name = $1', [name])).rows[0] ?? null;
  }

  /**
   * The file's bytes, chunk by chunk, or null when it is not stored. A file removed while it is read
   * ends the reading with an error rather than a short file.
   */
  async read(name: string): Promise<AsyncIterable<Buffer> | null> {
    const row = (await pgQuery<{ id: number; chunks: number }>(this.pool, 'SELECT id, chunks FROM staged_files WHERE name = $1', [name])).rows[0];
    if (!row) return null;
    const pool = this.pool;
    return (async function* () {
      for (let seq = 0; seq < row.chunks; seq++) {
        const chunk = (await pgQuery<{ data: Buffer }>(pool, 'SELECT data FROM staged_file_chunks WHERE file_id = $1 AND seq = $2', [row.id, seq])).rows[0];
        if (!chunk) throw new Error(`the staged file ${name} was removed while it was read`);
        yield chunk.data;
      }
    })();
  }

  /** Removes the files named and those under them (a name is also a folder: "a/b" removes "a/b/c"); how many went. */
  async remove(names: string[]): Promise<number> {
    if (names.length === 0) return 0;
    const { rowCount } = await pgQuery(
      this.pool,
      "DELETE FROM staged_files f USING unnest($1::text[]) AS n(name) WHERE f.name = n.name OR starts_with(f.name, n.name || '/')",
      [names],
    );
    return rowCount ?? 0;
  }

  /** Every stored file's name. */
  async names(): Promise<string[]> {
    return (await pgQuery<{ name: string }>(this.pool, 'SELECT name FROM staged_files ORDER BY name')).rows.map((r) => r.name);
  }

  /** The files whose name starts with `prefix` stored before `before` (ISO time), oldest first. */
  async listOlder(prefix: string, before: string): Promise<StagedFileRow[]> {
    return (
      await pgQuery<StagedFileRow>(
        this.pool,
        'SELECT name, size, created_at FROM staged_files WHERE starts_with(name, $1) AND created_at < $2 ORDER BY created_at',
        [prefix, before],
      )
    ).rows;
  }
}
