import path from 'node:path';
import type Database from 'better-sqlite3';

/** The connection (db.ts's Db; not imported from there, db.ts imports this file). */
type Db = Database.Database;

/** The usage counters' tables, moved out of the main database file (see attachUsageDb). */
const USAGE_TABLES: Record<string, string> = {
  usage_daily: `(
    member_id INTEGER NOT NULL,
    teamspace_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (member_id, day)
  )`,
  usage_member_monthly: `(
    member_id INTEGER NOT NULL,
    month TEXT NOT NULL,
    teamspace_id INTEGER NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    extra_requests INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (member_id, month)
  )`,
  usage_teamspace_monthly: `(
    teamspace_id INTEGER NOT NULL,
    month TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    extra_requests INTEGER NOT NULL DEFAULT 0,
    spend_cents REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (teamspace_id, month)
  )`,
};

/** The usage database next to a main database file (`usage.db`; in memory for an in-memory main). */
export function usageDbFile(mainFile: string): string {
  return mainFile === ':memory:' || mainFile === '' ? ':memory:' : path.join(path.dirname(mainFile), 'usage.db');
}

/**
 * Attaches the usage counters as schema `usage`, in their own file. Every metered request commits
 * a few counter pages; in the main file those commits grew the WAL that every search reads
 * through, and made the WAL keeper checkpoint under load (measured on the 1M-snippet bench:
 * metering cost 14% of /api/v2/context throughput, mostly kernel time). In their own file the
 * search index sees no writes while it serves, and the small usage WAL is checkpointed by SQLite's
 * automatic checkpoints (no long readers there). Unqualified names (`usage_daily`) resolve to the
 * attached tables once the main file has none, so the SQL of server/store/teams.ts is unchanged.
 * Tables of an older main file are moved over once. The two files are not one atomic unit: the
 * counters and the index never need to change together.
 */
export function attachUsageDb(db: Db, file: string): void {
  db.prepare('ATTACH DATABASE ? AS usage').run(file);
  db.pragma('usage.journal_mode = WAL');
  db.pragma('usage.synchronous = NORMAL');
  db.transaction(() => {
    for (const [table, columns] of Object.entries(USAGE_TABLES)) db.exec(`CREATE TABLE IF NOT EXISTS usage.${table} ${columns}`);
    db.exec('CREATE INDEX IF NOT EXISTS usage.usage_daily_teamspace ON usage_daily (teamspace_id, day)');
  })();
  // A main file from before: move its counters (idempotent if interrupted: rows are keyed, the copy skips what is there).
  const old = Object.keys(USAGE_TABLES).filter((t) => db.prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?").get(t) !== undefined);
  for (const table of old) {
    db.transaction(() => db.exec(`INSERT OR IGNORE INTO usage.${table} SELECT * FROM main.${table}`))();
    db.exec(`DROP TABLE main.${table}`);
  }
}
