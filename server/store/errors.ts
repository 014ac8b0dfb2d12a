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

/** The kinds of constraint a write can violate, named the same on both backends. */
export type ConstraintKind = 'unique' | 'foreign_key' | 'not_null' | 'check';

/** SQLite's extended result codes (better-sqlite3's SqliteError.code) by kind; PRIMARYKEY is a unique key too. */
const SQLITE_CODES: Record<string, ConstraintKind> = {
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign_key',
  SQLITE_CONSTRAINT_NOTNULL: 'not_null',
  SQLITE_CONSTRAINT_CHECK: 'check',
};

/** PostgreSQL's SQLSTATEs (pg's DatabaseError.code), class 23 (integrity constraint violation). */
const PG_CODES: Record<string, ConstraintKind> = { '23505': 'unique', '23503': 'foreign_key', '23502': 'not_null', '23514': 'check' };

/**
 * Which constraint a store call's error violated, whichever backend threw it, else null: a caller
 * that must tell "already there" or "refers to nothing" from other failures asks this, not the
 * backend's own error codes.
 */
export function constraintViolation(err: unknown): ConstraintKind | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  return SQLITE_CODES[code] ?? PG_CODES[code] ?? null;
}
