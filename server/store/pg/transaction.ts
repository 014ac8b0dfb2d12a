import type pg from 'pg';
import type { PgPool } from './pool.ts';

/** One connection taken from the pool, for the statements of one transaction. */
export type PgClient = pg.PoolClient;

/** Where a store sends a statement: the pool (each statement on its own), or the client of a transaction. */
export type PgQueryable = PgPool | PgClient;

/**
 * Runs `fn` on one connection between BEGIN and COMMIT, as SQLite's `db.transaction` runs its
 * function: all of it or, when `fn` throws, none of it (ROLLBACK, then the error goes on). A
 * connection whose ROLLBACK failed is broken, so it is destroyed rather than returned to the pool.
 */
export async function withTransaction<T>(pool: PgPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      const out = await fn(client);
      // A transaction a failed statement aborted answers COMMIT with ROLLBACK, without an error: when
      // `fn` caught that statement's error itself, its writes are gone and the caller must know.
      const commit = await client.query('COMMIT');
      if (commit.command !== 'COMMIT') throw new Error('the transaction was rolled back: one of its statements failed');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
        broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}
