import path from 'node:path';
import type Database from 'better-sqlite3';
import type { Db } from './db.ts';
import { migrations } from './migrations/index.ts';
import { openSqlite } from '../../lib/sqlite.ts';

/** The schema this code writes: the newest migration's number. An archive of a higher one came from a newer Stacks. */
export const SCHEMA_VERSION: number = Math.max(...migrations.map((m) => m.version));

export const MAIN_DB = 'stacks.db';
export const USAGE_DB = 'usage.db';

/**
 * Copies both databases into `dir` through SQLite's online backup API while the connection keeps
 * serving. Each copy is one consistent snapshot: a version being built is in it as `building`
 * (invisible, rebuilt by its job after a restore), never half swapped in. `pagesPerStep`: in the
 * server, small steps between which requests run (writes through this same connection are carried
 * into the copy); from another process (the CLI beside a server), one step, since a write by another
 * connection restarts a copy in progress.
 */
export async function snapshotDatabases(db: Db, dir: string, pagesPerStep: number): Promise<void> {
  const progress = () => pagesPerStep;
  await db.backup(path.join(dir, MAIN_DB), { progress });
  // better-sqlite3 takes `attached` (the schema to copy); its type definitions omit it.
  await db.backup(path.join(dir, USAGE_DB), { attached: 'usage', progress } as Database.BackupOptions);
}

export interface SnapshotSummary {
  schemaVersion: number;
  libraries: { id: string; title: string; visibility: string; versions: { tag: string; snippets: number; tokens: number }[] }[];
  counts: { libraries: number; versions: number; snippets: number; members: number; keys: number; activeJobs: number };
  /** Files the snapshot's queued and running jobs read (data-dir-relative or absolute paths). */
  jobInputs: string[];
}

/** What a database snapshot (or any stacks.db) holds: its schema version, served libraries, counts, and the inputs its pending jobs need. */
export function summarizeDatabase(file: string): SnapshotSummary {
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    const versions = db
      .prepare(
        "SELECT v.library_id AS id, l.title, l.visibility, v.tag, v.total_snippets AS snippets, v.total_tokens AS tokens FROM library_versions v JOIN libraries l ON l.id = v.library_id WHERE v.is_current = 1 AND v.state = 'ready' ORDER BY v.library_id, v.tag",
      )
      .all() as { id: string; title: string; visibility: string; tag: string; snippets: number; tokens: number }[];
    const libraries = new Map<string, SnapshotSummary['libraries'][number]>();
    for (const v of versions) {
      const lib = libraries.get(v.id) ?? { id: v.id, title: v.title, visibility: v.visibility, versions: [] };
      lib.versions.push({ tag: v.tag, snippets: v.snippets, tokens: v.tokens });
      libraries.set(v.id, lib);
    }
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const pending = db.prepare("SELECT payload_json AS payload FROM jobs WHERE state IN ('queued','running')").all() as { payload: string }[];
    const jobInputs = pending.flatMap(({ payload }) => {
      const p = JSON.parse(payload) as { file?: unknown; stagedDir?: unknown };
      return [p.file, p.stagedDir].filter((x): x is string => typeof x === 'string');
    });
    return {
      schemaVersion: schemaVersionOf(db),
      libraries: [...libraries.values()],
      counts: {
        libraries: libraries.size,
        versions: versions.length,
        snippets: versions.reduce((n, v) => n + v.snippets, 0),
        members: count('SELECT count(*) AS n FROM members WHERE removed_at IS NULL'),
        keys: count('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL'),
        activeJobs: pending.length,
      },
      jobInputs,
    };
  } finally {
    db.close();
  }
}

/** The newest migration a database file has applied (0 for one without the migrations table). */
export function schemaVersionOfFile(file: string): number {
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    return schemaVersionOf(db);
  } finally {
    db.close();
  }
}

function schemaVersionOf(db: Db): number {
  const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!has) return 0;
  return (db.prepare('SELECT coalesce(max(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
}
