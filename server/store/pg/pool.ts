import pg from 'pg';

export type PgPool = pg.Pool;

/**
 * The settings of every Stacks connection, set once when it opens (not per search: a round trip).
 * pgvector's HNSW search restricted to one version (PgSearchStore.hnsw) needs iterative scans
 * (pgvector 0.8), or it filters the ef_search nearest of the whole index by version afterwards and
 * a version holding a small share of the index gets fewer than k rows; relaxed_order lets the rows
 * come slightly out of order (they are sorted in the node). The candidate list (ef_search, default
 * 40) is HNSW_EF_SEARCH, longer than the lists retrieval asks for (TUNING.fusion.vectorLimit). On a
 * server without pgvector these are placeholders that nothing reads.
 */
export const HNSW_EF_SEARCH = 100;
const SESSION_SETTINGS = `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false), set_config('hnsw.ef_search', '${HNSW_EF_SEARCH}', false)`;

/**
 * A connection pool for STACKS_DATABASE_URL. BIGINT columns come back as numbers, as SQLite's
 * integers do: every id and counter stays far below 2^53, and the stores compare them as numbers.
 */
export function openPgPool(url: string, options: { max?: number; applicationName?: string; onIdleError?: (err: Error) => void } = {}): PgPool {
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'stacks',
    types,
    // Failing to set them is no reason to refuse the connection: without pgvector nothing reads them.
    onConnect: (client) =>
      client.query(SESSION_SETTINGS).then(
        () => undefined,
        () => undefined,
      ),
  });
  // An idle connection the server drops (a restart, a failover, an administrator) emits 'error' on the
  // pool; unheard, that would end the process. The pool replaces the connection on next use.
  pool.on('error', options.onIdleError ?? (() => undefined));
  return pool;
}

/** The server's version as a number (150004 for 15.4), and whether the pgvector extension can be created. */
export async function pgServerInfo(pool: PgPool): Promise<{ versionNum: number; pgvectorAvailable: boolean }> {
  const { rows } = await pool.query<{ v: string; vec: boolean }>(
    "SELECT current_setting('server_version_num') AS v, EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS vec",
  );
  return { versionNum: Number(rows[0].v), pgvectorAvailable: rows[0].vec };
}
