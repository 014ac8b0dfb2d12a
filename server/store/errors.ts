/**
 * Whether a store call failed on a UNIQUE (or primary key) constraint, on either backend: SQLite's
 * better-sqlite3 says `SQLITE_CONSTRAINT_UNIQUE` / `SQLITE_CONSTRAINT_PRIMARYKEY`, PostgreSQL's
 * driver SQLSTATE `23505` (unique_violation). A service that checks for a name and then inserts it
 * can lose that race to another process or node; this lets it answer `conflict` instead of a 500.
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null && 'code' in err ? (err as { code: unknown }).code : undefined;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
