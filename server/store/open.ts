import { Store } from './index.ts';
import { PgStore } from './pg/index.ts';

export interface OpenStoreOptions {
  dataDir: string;
  /** STACKS_DATABASE_URL: the state in PostgreSQL instead of <dataDir>/stacks.db. */
  databaseUrl?: string;
  /** PostgreSQL connections of this node. */
  poolSize?: number;
  /** SQLite: the request thread's cache of versions' vectors. PostgreSQL: the node's (search runs in the request thread there). */
  vectorCacheBytes: { sqlite: number; postgres: number };
  /** A PostgreSQL connection that failed while idle, or a policy refresh that failed. */
  onError?: (err: unknown) => void;
}

/**
 * The state's backend: PostgreSQL when a database URL is given (migrated once per cluster under an
 * advisory lock, pg/migrate.ts), else the SQLite file in the data dir.
 */
export async function openStore(o: OpenStoreOptions): Promise<Store | PgStore> {
  if (!o.databaseUrl) return Store.open(o.dataDir, { vectorCacheBytes: o.vectorCacheBytes.sqlite });
  return await PgStore.open(o.databaseUrl, { poolSize: o.poolSize, vectorCacheBytes: o.vectorCacheBytes.postgres, onError: o.onError });
}
