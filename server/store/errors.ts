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

/**
 * Whether a store call failed on a UNIQUE (or primary key) constraint: a service that checks for a
 * name and then inserts it can lose that race to another process or node, and answers `conflict`.
 */
export function isUniqueViolation(err: unknown): boolean {
  return constraintViolation(err) === 'unique';
}
