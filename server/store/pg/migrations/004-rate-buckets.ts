import type { PgMigration } from './migration.ts';

/**
 * The per-key token buckets of the request rate limit, shared by every node so that the limit
 * holds cluster-wide (SQLite keeps them in the one process's memory: it has no twin there).
 * `at_ms` is the database clock (epoch milliseconds) of the bucket's last request; `granted`
 * whether that request got a token (RETURNING sees only the new row, so the row says it).
 * A bucket untouched for a minute is full again and carries no state: the sweep deletes it by `at_ms`.
 */
export const m004: PgMigration = {
  version: 4,
  name: 'rate-buckets',
  sql: `
    CREATE TABLE rate_buckets (
      key TEXT PRIMARY KEY,
      tokens DOUBLE PRECISION NOT NULL,
      at_ms DOUBLE PRECISION NOT NULL,
      granted BOOLEAN NOT NULL
    );
    CREATE INDEX rate_buckets_at ON rate_buckets (at_ms);
  `,
};
