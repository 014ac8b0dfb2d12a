import type pg from 'pg';
import type { MemberRow, TeamspaceRow } from '../accounts.ts';
import type { MeterDecision, MeteredRequest, MonthlyTeamRow, RuleKind, RuleRow, TeamStore } from '../teams.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery, withInlineTransaction, withTransaction, type PgClient } from './transaction.ts';

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
   * SQLite's countRequests: the batch decided in arrival order, each request against the counts of
   * those before it (also other nodes' committed ones), a refusal counting nothing. Exact across
   * nodes by row locks instead of one lock for the cluster: the batch's teamspace-month rows, then
   * its member-month rows, are locked (made first when missing) and read, `decide` runs here on
   * those counts, and the new counts are written before COMMIT. Two round trips whatever the batch's
   * size (lockAndRead, then record and COMMIT in one simple-protocol message each); batches of
   * different teamspaces do not wait for each other.
   */
  async countRequests<R>(requests: readonly MeteredRequest[], day: string, decide: MeterDecision<R>): Promise<({ ok: R } | { err: unknown })[]> {
    if (requests.length === 0) return [];
    const month = day.slice(0, 7);
    const read = lockAndRead(requests, month);
    const run = async (client: PgClient, begin: string, commit: string) => {
      const [teamRows, memberRows] = (await simpleQuery(client, begin + read)).slice(-2) as [
        pg.QueryResult<TeamMonthLocked>,
        pg.QueryResult<MemberMonthLocked>,
      ];
      const teams = new Map(
        teamRows.rows.map(({ month_requests, month_extra_requests, month_spend_cents, ...t }) => [
          t.id,
          { t, requests: month_requests, extra: month_extra_requests, spend: month_spend_cents, changed: false },
        ]),
      );
      const members = new Map(memberRows.rows.map((m) => [m.member_id, { ...m, changed: false }]));
      const daily = new Map<number, { teamspaceId: number; requests: number }>();
      const out = requests.map((q): { ok: R } | { err: unknown } => {
        const team = teams.get(q.teamspaceId);
        const member = members.get(q.memberId);
        try {
          const d = decide(team?.t ?? null, member?.requests ?? 0, () => team?.spend ?? 0);
          // decide refuses a missing teamspace, and the member's row exists wherever the teamspace does
          if (!team || !member) throw new Error(`no usage rows for member ${q.memberId} of teamspace ${q.teamspaceId}`);
          // added one request at a time, as SQLite adds them, so the spend is the same float
          member.requests++;
          member.extra_requests += d.extra ? 1 : 0;
          team.requests++;
          team.extra += d.extra ? 1 : 0;
          team.spend += d.cents;
          member.changed = team.changed = true;
          const today = daily.get(q.memberId) ?? { teamspaceId: q.teamspaceId, requests: 0 };
          daily.set(q.memberId, { ...today, requests: today.requests + 1 });
          return { ok: d.result };
        } catch (err) {
          return { err };
        }
      });
      const write =
        daily.size === 0
          ? ''
          : record(
              day,
              [...daily].map(([memberId, d]) => ({ memberId, ...d })),
              [...members.values()].filter((m) => m.changed),
              [...teams.values()].filter((t) => t.changed).map((t) => ({ teamspaceId: t.t.id, requests: t.requests, extra: t.extra, spend: t.spend })),
            );
      const done = await simpleQuery(client, write + commit);
      if (commit && done.at(-1)?.command !== 'COMMIT') throw new Error('the metering transaction was rolled back');
      return out;
    };
    // BEGIN and COMMIT ride on the two messages; inside an open transaction, a savepoint of it (as immediate() nests).
    return withInlineTransaction(this.pool, run);
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

/** A teamspace as countRequests reads it: its row and its month's counters. */
type TeamMonthLocked = TeamspaceRow & { month_requests: number; month_extra_requests: number; month_spend_cents: number };
type MemberMonthLocked = { member_id: number; requests: number; extra_requests: number };

/**
 * Sends several statements as one simple-protocol message: one round trip, answered with one result
 * per statement (pg's typings know only the single-statement answer). The simple protocol takes no
 * parameters, so metering's values are inlined, each through one of the literal functions below.
 */
async function simpleQuery(client: PgClient, sql: string): Promise<pg.QueryResult[]> {
  if (!sql) return [];
  const r: unknown = await client.query(sql);
  return Array.isArray(r) ? (r as pg.QueryResult[]) : [r as pg.QueryResult];
}

function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
}

function float(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  return `'${n}'::float8`;
}

/** A day (YYYY-MM-DD) or a month (YYYY-MM) as a literal. */
function period(s: string): string {
  if (!/^\d{4}-\d{2}(?:-\d{2})?$/.test(s)) throw new Error(`not a day or a month: ${s}`);
  return `'${s}'`;
}

/**
 * The first round trip of countRequests: the teamspace-month rows of the batch's teamspaces, then the
 * member-month rows of its members, each made when missing and locked, returned as they are now. An
 * INSERT ... ON CONFLICT DO UPDATE locks the row it finds and returns its latest committed version
 * (a SELECT ... FOR UPDATE would not see a row another node made after this statement began, nor
 * lock it), and takes the locks in its rows' order: by teamspace, then (a later statement) by member.
 * Every batch takes them in that order, so two never deadlock (a batch only waits for a member's
 * row while holding its teamspace's, which every other batch needs first). The update changes no
 * value (n = n); its new row version is a HOT update, pruned in the page.
 */
function lockAndRead(requests: readonly MeteredRequest[], month: string): string {
  const m = period(month);
  const teamspaces = [...new Set(requests.map((q) => q.teamspaceId))].sort((a, b) => a - b).map(int);
  const members = [...new Map(requests.map((q) => [q.memberId, q.teamspaceId]))].sort((a, b) => a[0] - b[0]).map(([mem, ts]) => `(${int(mem)}, ${int(ts)})`);
  return `
    WITH locked AS (
      INSERT INTO usage_teamspace_monthly AS u (teamspace_id, month)
      SELECT id, ${m} FROM teamspaces WHERE id IN (${teamspaces.join(', ')}) ORDER BY id
      ON CONFLICT (teamspace_id, month) DO UPDATE SET requests = u.requests
      RETURNING u.teamspace_id, u.requests, u.extra_requests, u.spend_cents
    )
    SELECT t.*, l.requests AS month_requests, l.extra_requests AS month_extra_requests, l.spend_cents AS month_spend_cents
      FROM locked l JOIN teamspaces t ON t.id = l.teamspace_id;
    INSERT INTO usage_member_monthly AS u (member_id, month, teamspace_id)
    SELECT v.member_id, ${m}, v.teamspace_id FROM (VALUES ${members.join(', ')}) v (member_id, teamspace_id)
      WHERE v.teamspace_id IN (SELECT id FROM teamspaces) ORDER BY v.member_id
    ON CONFLICT (member_id, month) DO UPDATE SET requests = u.requests
    RETURNING u.member_id, u.requests, u.extra_requests;`;
}

/**
 * The second round trip's write: the day's requests added per member (UPSERT: those rows are not
 * locked, and the addition is atomic), and the month rows, locked since the first round trip, set to
 * what the batch made of them.
 */
function record(
  day: string,
  daily: { memberId: number; teamspaceId: number; requests: number }[],
  members: MemberMonthLocked[],
  teams: { teamspaceId: number; requests: number; extra: number; spend: number }[],
): string {
  const m = period(day.slice(0, 7));
  return `
    WITH daily AS (
      INSERT INTO usage_daily (member_id, teamspace_id, day, requests)
      VALUES ${daily.map((d) => `(${int(d.memberId)}, ${int(d.teamspaceId)}, ${period(day)}, ${int(d.requests)})`).join(', ')}
      ON CONFLICT (member_id, day) DO UPDATE SET requests = usage_daily.requests + excluded.requests
    ), members AS (
      UPDATE usage_member_monthly u SET requests = v.requests, extra_requests = v.extra_requests
        FROM (VALUES ${members.map((x) => `(${int(x.member_id)}, ${int(x.requests)}, ${int(x.extra_requests)})`).join(', ')}) v (member_id, requests, extra_requests)
        WHERE u.member_id = v.member_id AND u.month = ${m}
    )
    UPDATE usage_teamspace_monthly u SET requests = v.requests, extra_requests = v.extra_requests, spend_cents = v.spend_cents
      FROM (VALUES ${teams.map((t) => `(${int(t.teamspaceId)}, ${int(t.requests)}, ${int(t.extra)}, ${float(t.spend)})`).join(', ')}) v (teamspace_id, requests, extra_requests, spend_cents)
      WHERE u.teamspace_id = v.teamspace_id AND u.month = ${m};`;
}
