import { pgServerInfo, type PgPool } from './pool.ts';
import { pgMigrations, type PgMigration } from './migrations/index.ts';

/** The advisory lock every node takes to migrate: one cluster, one migrator at a time. */
const MIGRATION_LOCK = 0x5374_6163; // "Stac"

export class PgVersionError extends Error {
  override name = 'PgVersionError';
}

/**
 * Applies the pending migrations, each in its own transaction, recorded in schema_migrations. Nodes
 * starting together all call this: the session-level advisory lock makes the second wait for the
 * first and then find nothing to do, so each migration runs once per cluster. A database migrated by a
 * newer Stacks (a version this one does not know) is refused rather than written to.
 */
export async function migratePg(pool: PgPool, migrations: PgMigration[] = pgMigrations): Promise<{ applied: number[] }> {
  const { versionNum } = await pgServerInfo(pool);
  if (versionNum < 150000) throw new PgVersionError(`PostgreSQL ${versionNum} is too old: Stacks needs PostgreSQL 15 or newer.`);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const done = new Set(rows.map((r) => r.version));
      const known = new Set(migrations.map((m) => m.version));
      const unknown = [...done].filter((v) => !known.has(v));
      if (unknown.length > 0)
        throw new PgVersionError(`The database was migrated by a newer Stacks (migration ${Math.max(...unknown)}); upgrade this node before it connects.`);
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
        applied.push(m.version);
      }
      return { applied };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
