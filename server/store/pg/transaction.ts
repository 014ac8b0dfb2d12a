import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { PgPool } from './pool.ts';

/** One connection taken from the pool, for the statements of one transaction. */
export type PgClient = pg.PoolClient;

/** Where a store sends a statement: the pool (each statement on its own), or the client of a transaction. */
export type PgQueryable = PgPool | PgClient;

/** The transaction open in an async context: its pool, its connection, how deep its savepoints go. */
interface OpenTransaction {
  pool: PgPool;
  client: PgClient;
  depth: number;
  open: boolean;
}

const current = new AsyncLocalStorage<OpenTransaction>();

/**
 * Where a statement on `pool` goes: inside withTransaction on that pool (in the same async context),
 * to the transaction's connection, as every SQLite store's statement inside `db.transaction` runs in
 * that transaction; else to the pool. A call that outlives its transaction goes to the pool.
 */
export function connectionFor(pool: PgPool): PgQueryable {
  const t = current.getStore();
  return t?.open && t.pool === pool ? t.client : pool;
}

/**
 * A statement each connection prepares once (by its name) and then only binds and runs: no parse and,
 * once PostgreSQL settles on a generic plan, no planning per request. For the fixed statements of
 * every search; not for statements whose text varies, nor for `SELECT *` (a column added by a newer
 * node's migration would make the prepared statement fail: "cached plan must not change result type").
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

const statements = new Map<string, NamedStatement>();

/** `text` as a NamedStatement, named by its hash (the same text is the same statement on every connection). */
export function named(text: string): NamedStatement {
  let s = statements.get(text);
  if (!s) statements.set(text, (s = { name: `stacks_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text }));
  return s;
}

/** pool.query, in the open transaction when there is one (connectionFor). */
export function pgQuery<R extends pg.QueryResultRow>(pool: PgPool, sql: string | NamedStatement, args: unknown[] = []): Promise<pg.QueryResult<R>> {
  const db = connectionFor(pool);
  const query = typeof sql === 'string' ? { text: sql, values: args } : { name: sql.name, text: sql.text, values: args };
  return db === pool ? pool.query<R>(query) : (db as PgClient).query<R>(query);
}

/**
 * Runs `fn` on one connection between BEGIN and COMMIT, as SQLite's `db.transaction` runs its
 * function: all of it or, when `fn` throws, none of it (ROLLBACK, then the error goes on). The
 * statements stores send through pgQuery inside `fn` join the transaction (connectionFor). Inside
 * another transaction on the same pool it is a savepoint, as better-sqlite3's nested transactions
 * are: a throw undoes only the inner part.
 */
export async function withTransaction<T>(pool: PgPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const outer = current.getStore();
  if (outer?.open && outer.pool === pool) return savepoint(outer, fn);
  return onOneConnection(pool, 'BEGIN', fn);
}

/**
 * Runs `fn` in one read snapshot, as SQLite's SearchStore.snapshot does: one connection in a
 * REPEATABLE READ READ ONLY transaction, so every statement stores send through pgQuery inside `fn`
 * sees the database as of its first statement (an answer never mixes the rows of a version being
 * swapped out with those of its successor). Inside another transaction on the same pool, `fn` runs
 * in that one. The connection is held until `fn` settles: `fn` must only read.
 */
export async function withSnapshot<T>(pool: PgPool, fn: () => T | Promise<T>): Promise<T> {
  const outer = current.getStore();
  if (outer?.open && outer.pool === pool) return fn();
  return onOneConnection(pool, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', async () => fn());
}

/**
 * `fn` between `begin` and COMMIT on one connection of the pool, the stores' statements inside it
 * joining it (connectionFor); ROLLBACK when it throws. A connection whose ROLLBACK failed is broken:
 * destroyed rather than returned to the pool.
 */
async function onOneConnection<T>(pool: PgPool, begin: string, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const t: OpenTransaction = { pool, client, depth: 0, open: true };
  try {
    await client.query(begin);
    const out = await current.run(t, () => fn(client));
    // A transaction a failed statement aborted answers COMMIT with ROLLBACK, without an error: when
    // `fn` caught that statement's error itself, its writes are gone and the caller must know.
    const commit = await client.query('COMMIT');
    if (commit.command !== 'COMMIT') throw new Error('the transaction was rolled back: one of its statements failed');
    return out;
  } catch (err) {
    t.open = false;
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    t.open = false;
    client.release(broken);
  }
}

export function inTransaction(pool: PgPool): boolean {
  const t = current.getStore();
  return !!t?.open && t.pool === pool;
}

async function savepoint<T>(t: OpenTransaction, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const name = `stacks_${++t.depth}`;
  try {
    await t.client.query(`SAVEPOINT ${name}`);
    try {
      const out = await fn(t.client);
      await t.client.query(`RELEASE SAVEPOINT ${name}`);
      return out;
    } catch (err) {
      await t.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
      await t.client.query(`RELEASE SAVEPOINT ${name}`);
      throw err;
    }
  } finally {
    t.depth--;
  }
}
