import type { PgPool } from './pool.ts';

/**
 * The other Stacks connections to this database now (pg_stat_activity: every process with a
 * PgStore open keeps one, since its policy copy reads the database every second), by application
 * name and client address ("stacks from 10.0.0.5 (3 connections)"), leaving out those named
 * `except` (the caller's own). Any role sees other sessions' application names; their address only
 * a superuser, a member of pg_read_all_stats or of the session's role (else it is left out).
 */
export async function connectedNodes(pool: PgPool, except: string): Promise<string[]> {
  const { rows } = await pool.query<{ who: string; n: number }>(
    `SELECT application_name || coalesce(' from ' || host(client_addr), '') AS who, count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'stacks%' AND application_name <> $1
     GROUP BY 1 ORDER BY 1`,
    [except],
  );
  return rows.map((r) => `${r.who} (${r.n} connection${r.n === 1 ? '' : 's'})`);
}
