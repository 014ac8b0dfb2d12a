import type { AuditInsert, AuditQuery, AuditRow, AuditStore } from '../audit.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { noNul } from './text.ts';
import { pgQuery, withTransaction } from './transaction.ts';

/** The key space of aggregate()'s advisory locks (two-key locks: apart from the single-key ones of migrate.ts and teams.ts). */
const AGGREGATE_LOCKS = 0x5341; // "SA"

/** The audit log on PostgreSQL, method for method SQLite's AuditStore (server/store/audit.ts). */
export class PgAuditStore implements SameShape<AuditStore> {
  constructor(private readonly pool: PgPool) {}

  async append(e: AuditInsert): Promise<number> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      `INSERT INTO audit_log (at, last_at, actor_kind, actor_key_id, actor_name, teamspace_id, action, target, source_ip, outcome, detail)
       VALUES ($1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [
        e.at,
        e.actor_kind,
        e.actor_key_id,
        noNul(e.actor_name),
        e.teamspace_id,
        noNul(e.action),
        noNul(e.target),
        noNul(e.source_ip),
        e.outcome,
        noNul(e.detail),
      ],
    );
    return rows[0].id;
  }

  /**
   * Counts one more occurrence into the latest entry of `action` from `sourceIp` since `windowStart`;
   * false when there is none. One statement: nodes bumping the same entry at once each add one.
   */
  async bump(action: string, sourceIp: string, windowStart: string, at: string): Promise<boolean> {
    const r = await pgQuery(
      this.pool,
      `UPDATE audit_log SET count = count + 1, last_at = $1
       WHERE id = (SELECT id FROM audit_log WHERE action = $2 AND source_ip = $3 AND at >= $4 ORDER BY id DESC LIMIT 1)`,
      [at, action, sourceIp, windowStart],
    );
    return (r.rowCount ?? 0) > 0;
  }

  /**
   * Records one occurrence of an aggregated entry (a refused authentication), as the async SQLite
   * store's aggregate() does in one IMMEDIATE transaction: counted into the entry of `action` from
   * `e.source_ip` since `windowStart`; when there is none and `perWindow` distinct entries exist since
   * then, into the `overflowIp` entry; else appended. Nodes recording the same action take turns on an
   * advisory lock for it, so the cap on distinct entries and the single overflow entry hold exactly.
   */
  async aggregate(e: AuditInsert & { source_ip: string }, windowStart: string, perWindow: number, overflowIp: string): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [AGGREGATE_LOCKS, e.action]);
      if (await this.bump(e.action, e.source_ip, windowStart, e.at)) return;
      let row = e;
      if ((await this.countSince(e.action, windowStart)) >= perWindow) {
        if (await this.bump(e.action, overflowIp, windowStart, e.at)) return;
        row = { ...e, source_ip: overflowIp };
      }
      await this.append(row);
    });
  }

  /** Distinct entries of `action` written since `since`. */
  async countSince(action: string, since: string): Promise<number> {
    return (await pgQuery<{ n: number }>(this.pool, 'SELECT count(*) AS n FROM audit_log WHERE action = $1 AND at >= $2', [action, since])).rows[0].n;
  }

  async list(q: AuditQuery): Promise<AuditRow[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: (n: string) => string, value: unknown) => {
      args.push(value);
      where.push(clause(`$${args.length}`));
    };
    if (q.teamspaceId !== undefined)
      add((n) => (q.withInstance ? `(a.teamspace_id = ${n} OR a.teamspace_id IS NULL)` : `a.teamspace_id = ${n}`), q.teamspaceId);
    if (q.since) add((n) => `a.last_at >= ${n}`, q.since);
    if (q.until) add((n) => `a.at < ${n}`, q.until);
    if (q.action) add((n) => `a.action = ${n}`, q.action);
    if (q.before) add((n) => `a.id < ${n}`, q.before);
    const key = q.actor ? /^key:(\d+)$/.exec(q.actor) : null;
    if (key) add((n) => `a.actor_kind = 'key' AND a.actor_key_id = ${n}`, Number(key[1]));
    else if (q.actor === 'operator' || q.actor === 'anonymous') add((n) => `a.actor_kind = ${n}`, q.actor);
    else if (q.actor) add((n) => `a.actor_name = ${n}`, q.actor);
    args.push(q.limit);
    const sql = `SELECT a.*, t.name AS teamspace FROM audit_log a LEFT JOIN teamspaces t ON t.id = a.teamspace_id
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY a.id DESC LIMIT $${args.length}`;
    return (await pgQuery<AuditRow>(this.pool, sql, args)).rows;
  }

  /** Deletes entries whose last occurrence is older than `before`; returns how many. */
  async prune(before: string): Promise<number> {
    return (await pgQuery(this.pool, 'DELETE FROM audit_log WHERE last_at < $1', [before])).rowCount ?? 0;
  }
}
