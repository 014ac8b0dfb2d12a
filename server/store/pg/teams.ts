import type pg from 'pg';
import type { MemberRow, TeamspaceRow } from '../accounts.ts';
import type { MeterAnswer, MeteredRequest, MonthlyTeamRow, RuleKind, RuleRow, TeamStore } from '../teams.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { answerJudged, type MeterJudgment } from '../meter-rule.ts';
import { named, pgQuery, withTransaction } from './transaction.ts';

/**
 * The advisory lock immediate() takes: SQLite's BEGIN IMMEDIATE lets one writer at a time decide,
 * across processes; this lock does the same across nodes (different from migrate.ts's). Metering
 * does not take it (countRequests locks its rows); the anonymous member's creation does.
 */
const IMMEDIATE_LOCK = 0x5374_4d74; // "StMt"

/**
 * Policies, usage counters, members beyond AccountStore and rules on PostgreSQL, method for
 * method SQLite's TeamStore (server/store/teams.ts). The usage counters are plain tables here
 * (SQLite keeps them in usage.db). A batch of metered requests is decided and counted by
 * countRequests in one transaction that locks only the batch's counter rows. The store calls made
 * inside immediate()'s callback run on that transaction's connection (transaction.ts's
 * connectionFor), so the callback needs no other handle.
 */
// `policy` is SQLite's synchronous read surface for the search path's team cache (server/store/index.ts):
// it has no PostgreSQL twin until that path is designed for an asynchronous store.
export class PgTeamStore implements SameShape<Omit<TeamStore, 'policy'>> {
  constructor(private readonly pool: PgPool) {}

  private query<R extends pg.QueryResultRow>(sql: string, args: unknown[] = []): Promise<pg.QueryResult<R>> {
    return pgQuery<R>(this.pool, sql, args);
  }

  private async one<R extends pg.QueryResultRow>(sql: string, args: unknown[]): Promise<R | null> {
    return (await this.query<R>(sql, args)).rows[0] ?? null;
  }

  private async count(sql: string, args: unknown[]): Promise<number> {
    return (await this.query<{ n: number }>(sql, args)).rows[0].n;
  }

  /**
   * Changes when a teamspace or a rule changes, whichever node wrote it: what SQLite's data_version
   * tells TeamCache about other processes. PostgreSQL has no such counter, so this is a 48-bit hash
   * of exactly what TeamCache holds (the teamspaces' rows and the rules; both small tables).
   */
  async dataVersion(): Promise<number> {
    const { rows } = await this.query<{ v: number }>(
      `SELECT ('x' || left(md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY t.id) FROM teamspaces t), '') || '#' ||
         coalesce((SELECT string_agg(r::text, '|' ORDER BY r.id) FROM rules r), '')), 12))::bit(48)::bigint AS v`,
    );
    return rows[0].v;
  }

  /**
   * Runs fn in one transaction holding the cluster-wide IMMEDIATE_LOCK, as SQLite's BEGIN IMMEDIATE:
   * its read-decide-write is atomic with every other immediate(), also across nodes. Inside a
   * transaction already, a savepoint of it (the lock is re-entrant within the connection).
   */
  immediate<T>(fn: () => T | Promise<T>): Promise<T> {
    return withTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [IMMEDIATE_LOCK]);
      return fn();
    });
  }

  /**
   * SQLite's countRequests: the batch judged in arrival order (meter-rule.ts), each request against
   * the counts of those before it (also other nodes' committed ones), a refusal counting nothing.
   * One statement: migration 8's function locks the batch's counter rows, judges each request by
   * the same rule in SQL, counts it, and returns what it judged it on. The locks last as long as the
   * statement, not a round trip to this node, so the nodes' batches of one teamspace (whose month
   * row every request of it updates) follow each other closely.
   */
  async countRequests<R>(requests: readonly MeteredRequest[], day: string, answer: MeterAnswer<R>): Promise<({ ok: R } | { err: unknown })[]> {
    if (requests.length === 0) return [];
    const { rows } = await pgQuery<MeterJudgment>(this.pool, COUNT_REQUESTS, [requests.map((q) => q.memberId), requests.map((q) => q.teamspaceId), day]);
    if (rows.length !== requests.length) throw new Error(`metering: ${rows.length} judgments for ${requests.length} requests`);
    return rows.map((judged) => answerJudged(judged, answer));
  }

  teamspace(id: number): Promise<TeamspaceRow | null> {
    return this.one('SELECT * FROM teamspaces WHERE id = $1', [id]);
  }

  // ---- usage ----

  async memberMonth(memberId: number, month: string): Promise<{ requests: number; extra_requests: number }> {
    const row = await this.one<{ requests: number; extra_requests: number }>(
      'SELECT requests, extra_requests FROM usage_member_monthly WHERE member_id = $1 AND month = $2',
      [memberId, month],
    );
    return row ?? { requests: 0, extra_requests: 0 };
  }

  async teamMonth(teamspaceId: number, month: string): Promise<MonthlyTeamRow> {
    const row = await this.one<MonthlyTeamRow>(
      'SELECT requests, extra_requests, spend_cents FROM usage_teamspace_monthly WHERE teamspace_id = $1 AND month = $2',
      [teamspaceId, month],
    );
    return row ?? { requests: 0, extra_requests: 0, spend_cents: 0 };
  }

  /**
   * Adds `count` requests (of which `extra` beyond the plan, costing `spendCents`) to the day and month
   * counters: one statement of three UPSERTs, each `n = n + excluded.n`, so it is atomic even outside
   * immediate() and concurrent nodes never lose an increment.
   */
  async record(memberId: number, teamspaceId: number, day: string, count: number, extra: number, spendCents: number): Promise<void> {
    await this.query(
      `WITH daily AS (
         INSERT INTO usage_daily (member_id, teamspace_id, day, requests) VALUES ($1, $2, $3, $4)
         ON CONFLICT (member_id, day) DO UPDATE SET requests = usage_daily.requests + excluded.requests
       ), member_month AS (
         INSERT INTO usage_member_monthly (member_id, month, teamspace_id, requests, extra_requests) VALUES ($1, $5, $2, $4, $6)
         ON CONFLICT (member_id, month) DO UPDATE SET requests = usage_member_monthly.requests + excluded.requests,
           extra_requests = usage_member_monthly.extra_requests + excluded.extra_requests
       )
       INSERT INTO usage_teamspace_monthly (teamspace_id, month, requests, extra_requests, spend_cents) VALUES ($2, $5, $4, $6, $7)
       ON CONFLICT (teamspace_id, month) DO UPDATE SET requests = usage_teamspace_monthly.requests + excluded.requests,
         extra_requests = usage_teamspace_monthly.extra_requests + excluded.extra_requests,
         spend_cents = usage_teamspace_monthly.spend_cents + excluded.spend_cents`,
      [memberId, teamspaceId, day, count, day.slice(0, 7), extra, spendCents],
    );
  }

  /** Requests per day of a teamspace between two days (inclusive); days without requests are absent. */
  async teamDaily(teamspaceId: number, fromDay: string, toDay: string): Promise<{ day: string; requests: number }[]> {
    // sum() of BIGINT is NUMERIC, which the driver returns as a string: cast back, as SQLite answers an integer.
    const sql = 'SELECT day, sum(requests)::bigint AS requests FROM usage_daily WHERE teamspace_id = $1 AND day >= $2 AND day <= $3 GROUP BY day ORDER BY day';
    return (await this.query<{ day: string; requests: number }>(sql, [teamspaceId, fromDay, toDay])).rows;
  }

  async memberDaily(memberId: number, fromDay: string, toDay: string): Promise<{ day: string; requests: number }[]> {
    const sql = 'SELECT day, requests FROM usage_daily WHERE member_id = $1 AND day >= $2 AND day <= $3 ORDER BY day';
    return (await this.query<{ day: string; requests: number }>(sql, [memberId, fromDay, toDay])).rows;
  }

  // ---- members ----

  /** The teamspace's synthetic member for anonymous callers, created on first use (atomically, also across nodes). */
  anonymousMember(teamspaceId: number, name: string, now: string): Promise<number> {
    return this.immediate(async () => {
      const row = await this.one<{ id: number }>('SELECT id FROM members WHERE teamspace_id = $1 AND synthetic = 1 ORDER BY id LIMIT 1', [teamspaceId]);
      if (row) return row.id;
      const sql = "INSERT INTO members (teamspace_id, name, email, role, created_at, synthetic) VALUES ($1, $2, NULL, 'member', $3, 1) RETURNING id";
      return (await this.query<{ id: number }>(sql, [teamspaceId, name, now])).rows[0].id;
    });
  }

  /** Active people of a teamspace (no synthetic member). */
  async people(teamspaceId: number): Promise<(MemberRow & { key_count: number })[]> {
    const sql = `SELECT m.*, (SELECT count(*) FROM api_keys k WHERE k.member_id = m.id AND k.revoked_at IS NULL) AS key_count
       FROM members m WHERE m.teamspace_id = $1 AND m.removed_at IS NULL AND m.synthetic = 0 ORDER BY m.id`;
    return (await this.query<MemberRow & { key_count: number }>(sql, [teamspaceId])).rows;
  }

  /** Active people of the whole installation: the license's maxMembers counts seats across teamspaces. */
  seatCount(): Promise<number> {
    return this.count('SELECT count(*) AS n FROM members WHERE removed_at IS NULL AND synthetic = 0', []);
  }

  /** Every teamspace with its number of active people, oldest (the default) first. */
  async teamspaces(): Promise<(TeamspaceRow & { people: number })[]> {
    const sql =
      'SELECT t.*, (SELECT count(*) FROM members m WHERE m.teamspace_id = t.id AND m.removed_at IS NULL AND m.synthetic = 0) AS people FROM teamspaces t ORDER BY t.id';
    return (await this.query<TeamspaceRow & { people: number }>(sql)).rows;
  }

  peopleCount(teamspaceId: number): Promise<number> {
    return this.count('SELECT count(*) AS n FROM members WHERE teamspace_id = $1 AND removed_at IS NULL AND synthetic = 0', [teamspaceId]);
  }

  ownerCount(teamspaceId: number): Promise<number> {
    return this.count("SELECT count(*) AS n FROM members WHERE teamspace_id = $1 AND removed_at IS NULL AND synthetic = 0 AND role = 'owner'", [teamspaceId]);
  }

  async isSynthetic(memberId: number): Promise<boolean> {
    return ((await this.one<{ synthetic: number }>('SELECT synthetic FROM members WHERE id = $1', [memberId]))?.synthetic ?? 0) === 1;
  }

  /** A removed member's name is freed for reuse by renaming the old row. */
  async renameMember(id: number, name: string): Promise<void> {
    await this.query('UPDATE members SET name = $1 WHERE id = $2', [name, id]);
  }

  // ---- rules ----

  async insertRule(kind: RuleKind, teamspaceId: number | null, libraryId: string | null, text: string, now: string): Promise<number> {
    const sql = 'INSERT INTO rules (kind, teamspace_id, library_id, text, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id';
    return (await this.query<{ id: number }>(sql, [kind, teamspaceId, libraryId, text, now])).rows[0].id;
  }

  rule(id: number): Promise<RuleRow | null> {
    return this.one('SELECT * FROM rules WHERE id = $1', [id]);
  }

  async deleteRule(id: number): Promise<boolean> {
    return ((await this.query('DELETE FROM rules WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }

  /** Rules a teamspace sees: its global and team-library rules, and every library-owner rule. */
  async rulesFor(teamspaceId: number): Promise<RuleRow[]> {
    return (await this.query<RuleRow>("SELECT * FROM rules WHERE teamspace_id = $1 OR kind = 'library_own' ORDER BY id", [teamspaceId])).rows;
  }
}

/** The batch judged and counted by migration 8's function, one row per request in its order: what meter-rule.ts's MeterJudgment holds. */
const COUNT_REQUESTS = named('SELECT verdict, teamspace, used FROM stacks_count_requests($1::bigint[], $2::bigint[], $3::text) ORDER BY at');
