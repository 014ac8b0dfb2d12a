import type { Db } from './db.ts';

export type AuditOutcome = 'ok' | 'refused' | 'failed';
export type AuditActorKind = 'key' | 'user' | 'operator' | 'anonymous';

export interface AuditRow {
  id: number;
  at: string;
  last_at: string;
  count: number;
  actor_kind: AuditActorKind;
  actor_key_id: number | null;
  actor_name: string | null;
  teamspace_id: number | null;
  teamspace: string | null;
  action: string;
  target: string | null;
  source_ip: string | null;
  outcome: AuditOutcome;
  detail: string | null;
}

export type AuditInsert = Omit<AuditRow, 'id' | 'last_at' | 'count' | 'teamspace'>;

export interface AuditQuery {
  /** Only this teamspace's entries (plus instance-level ones, without a teamspace, when `withInstance`). */
  teamspaceId?: number;
  withInstance?: boolean;
  since?: string;
  until?: string;
  /** A member or user name, `key:<id>`, `operator` or `anonymous`. */
  actor?: string;
  action?: string;
  /** Entries older than this id (the previous page's `next`). */
  before?: number;
  limit: number;
}

/** The audit_log table: appends, the aggregation of refusals, paged reads, retention. */
export class AuditStore {
  constructor(private readonly db: Db) {}

  async append(e: AuditInsert): Promise<number> {
    return this.insert(e);
  }

  private insert(e: AuditInsert): number {
    return Number(
      this.db
        .prepare(
          `INSERT INTO audit_log (at, last_at, actor_kind, actor_key_id, actor_name, teamspace_id, action, target, source_ip, outcome, detail)
           VALUES (@at, @at, @actor_kind, @actor_key_id, @actor_name, @teamspace_id, @action, @target, @source_ip, @outcome, @detail)`,
        )
        .run(e).lastInsertRowid,
    );
  }

  /**
   * Records one occurrence of an aggregated entry (a refused authentication), in one transaction:
   * counted into the entry of `action` from `sourceIp` started at or after `windowStart`; when
   * there is none and `perWindow` distinct entries exist since then, into the `overflowIp` entry;
   * else appended as `e`. Check and write together, so concurrent refusals never add one too many.
   */
  async aggregate(e: AuditInsert & { source_ip: string }, windowStart: string, perWindow: number, overflowIp: string): Promise<void> {
    this.db
      .transaction(() => {
        if (this.bump(e.action, e.source_ip, windowStart, e.at)) return;
        let row = e;
        if (this.countSince(e.action, windowStart) >= perWindow) {
          if (this.bump(e.action, overflowIp, windowStart, e.at)) return;
          row = { ...e, source_ip: overflowIp };
        }
        this.insert(row);
      })
      .immediate();
  }

  private bump(action: string, sourceIp: string, windowStart: string, at: string): boolean {
    return (
      this.db
        .prepare(
          `UPDATE audit_log SET count = count + 1, last_at = ?
           WHERE id = (SELECT id FROM audit_log WHERE action = ? AND source_ip = ? AND at >= ? ORDER BY id DESC LIMIT 1)`,
        )
        .run(at, action, sourceIp, windowStart).changes > 0
    );
  }

  /** Distinct entries of `action` written since `since` (to cap how many a flood may add). */
  private countSince(action: string, since: string): number {
    return (this.db.prepare('SELECT count(*) AS n FROM audit_log WHERE action = ? AND at >= ?').get(action, since) as { n: number }).n;
  }

  async list(q: AuditQuery): Promise<AuditRow[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      args.push(value);
    };
    if (q.teamspaceId !== undefined) add(q.withInstance ? '(a.teamspace_id = ? OR a.teamspace_id IS NULL)' : 'a.teamspace_id = ?', q.teamspaceId);
    if (q.since) add('a.last_at >= ?', q.since);
    if (q.until) add('a.at < ?', q.until);
    if (q.action) add('a.action = ?', q.action);
    if (q.before) add('a.id < ?', q.before);
    const key = q.actor ? /^key:(\d+)$/.exec(q.actor) : null;
    if (key) add("a.actor_kind = 'key' AND a.actor_key_id = ?", Number(key[1]));
    else if (q.actor === 'operator' || q.actor === 'anonymous') add('a.actor_kind = ?', q.actor);
    else if (q.actor) add('a.actor_name = ?', q.actor);
    const sql = `SELECT a.*, t.name AS teamspace FROM audit_log a LEFT JOIN teamspaces t ON t.id = a.teamspace_id
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY a.id DESC LIMIT ?`;
    return this.db.prepare(sql).all(...args, q.limit) as AuditRow[];
  }

  /** Deletes entries whose last occurrence is older than `before`; returns how many. */
  async prune(before: string): Promise<number> {
    return this.db.prepare('DELETE FROM audit_log WHERE last_at < ?').run(before).changes;
  }
}
