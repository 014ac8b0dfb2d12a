import type { Db } from './db.ts';

import type { MemberRow, TeamspaceRow } from './accounts.ts';
import { answerJudged, counted, meterVerdict, type MeterJudgment } from './meter-rule.ts';

export type RuleKind = 'global' | 'library_own' | 'library_team';

export interface RuleRow {
  id: number;
  kind: RuleKind;
  teamspace_id: number | null;
  library_id: string | null;
  text: string;
  created_at: string;
}

export interface MonthlyTeamRow {
  requests: number;
  extra_requests: number;
  spend_cents: number;
}

export interface MemberUsageRow {
  member_id: number;
  requests: number;
  extra_requests: number;
}

/**
 * What the search path reads of a teamspace on every candidate library, synchronously, through
 * the in-memory TeamCache (server/teams/cache.ts): its row (policy), its rules, and SQLite's
 * data_version, which tells the cache when another connection committed.
 */
export class TeamPolicyReads {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      teamspace: db.prepare('SELECT * FROM teamspaces WHERE id = ?'),
      rulesFor: db.prepare("SELECT * FROM rules WHERE teamspace_id = ? OR kind = 'library_own' ORDER BY id"),
    };
  }

  /** Changes when another connection (e.g. the CLI) commits; lets in-memory caches stay correct across processes. */
  dataVersion(): number {
    return this.stmts.dataVersion.get() as number;
  }

  teamspace(id: number): TeamspaceRow | null {
    return (this.stmts.teamspace.get(id) as TeamspaceRow | undefined) ?? null;
  }

  /** Rules a teamspace sees: its global and team-library rules, and every library-owner rule. */
  rulesFor(teamspaceId: number): RuleRow[] {
    return this.stmts.rulesFor.all(teamspaceId) as RuleRow[];
  }
}

/** One metered request: whose, and the decision over the counts read in its transaction. */
export interface MeteredRequest {
  memberId: number;
  teamspaceId: number;
}

/**
 * The answer to a request the store judged and counted (meter-rule.ts): what the caller gets, or
 * the refusal thrown. It must only look at what it is given.
 */
export type MeterAnswer<R> = (judged: MeterJudgment) => R;

/**
 * SQL of the teamspaces feature: policies, usage counters, rules, members beyond the basics
 * of AccountStore. Counter updates are single UPSERTs (`requests = requests + 1`) inside one
 * IMMEDIATE transaction per batch of requests (countRequests), so concurrent writers (threads,
 * processes) never lose one and never both take the last included request.
 */
export class TeamStore {
  private readonly stmts;
  readonly policy: TeamPolicyReads;

  constructor(private readonly db: Db) {
    this.policy = new TeamPolicyReads(db);
    this.stmts = {
      memberMonth: db.prepare('SELECT requests, extra_requests FROM usage_member_monthly WHERE member_id = ? AND month = ?'),
      teamMonth: db.prepare('SELECT requests, extra_requests, spend_cents FROM usage_teamspace_monthly WHERE teamspace_id = ? AND month = ?'),
      bumpDaily: db.prepare(
        `INSERT INTO usage_daily (member_id, teamspace_id, day, requests) VALUES (?, ?, ?, ?)
         ON CONFLICT (member_id, day) DO UPDATE SET requests = requests + excluded.requests`,
      ),
      bumpMemberMonth: db.prepare(
        `INSERT INTO usage_member_monthly (member_id, month, teamspace_id, requests, extra_requests) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (member_id, month) DO UPDATE SET requests = requests + excluded.requests, extra_requests = extra_requests + excluded.extra_requests`,
      ),
      bumpTeamMonth: db.prepare(
        `INSERT INTO usage_teamspace_monthly (teamspace_id, month, requests, extra_requests, spend_cents) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (teamspace_id, month) DO UPDATE SET requests = requests + excluded.requests,
           extra_requests = extra_requests + excluded.extra_requests, spend_cents = spend_cents + excluded.spend_cents`,
      ),
    };
  }

  private immediate<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  async teamspace(id: number): Promise<TeamspaceRow | null> {
    return this.policy.teamspace(id);
  }

  /**
   * Judges (meter-rule.ts) and counts requests in one IMMEDIATE transaction, each against the
   * counts of those before it (in this call and in every committed one, also of other processes):
   * per request what `answer` made of its judgment, or the error it threw (a refusal counts
   * nothing; the others stand).
   */
  async countRequests<R>(requests: readonly MeteredRequest[], day: string, answer: MeterAnswer<R>): Promise<({ ok: R } | { err: unknown })[]> {
    const month = day.slice(0, 7);
    return this.immediate(() =>
      requests.map((q) => {
        const teamspace = this.policy.teamspace(q.teamspaceId);
        const used = this.memberMonthRow(q.memberId, month).requests;
        const verdict = meterVerdict(teamspace, used, () => this.teamMonthRow(q.teamspaceId, month).spend_cents);
        if (teamspace && counted(verdict)) {
          const extra = verdict === 'extra';
          this.recordRow(q.memberId, q.teamspaceId, day, 1, extra ? 1 : 0, extra ? teamspace.cents_per_extra_request : 0);
        }
        return answerJudged({ verdict, teamspace, used }, answer);
      }),
    );
  }

  // ---- usage ----

  async memberMonth(memberId: number, month: string): Promise<{ requests: number; extra_requests: number }> {
    return this.memberMonthRow(memberId, month);
  }

  private memberMonthRow(memberId: number, month: string): { requests: number; extra_requests: number } {
    return (this.stmts.memberMonth.get(memberId, month) as { requests: number; extra_requests: number } | undefined) ?? { requests: 0, extra_requests: 0 };
  }

  async teamMonth(teamspaceId: number, month: string): Promise<MonthlyTeamRow> {
    return this.teamMonthRow(teamspaceId, month);
  }

  private teamMonthRow(teamspaceId: number, month: string): MonthlyTeamRow {
    return (this.stmts.teamMonth.get(teamspaceId, month) as MonthlyTeamRow | undefined) ?? { requests: 0, extra_requests: 0, spend_cents: 0 };
  }

  /** Adds `count` requests (of which `extra` beyond the plan, costing `spendCents`) to the day and month counters. */
  async record(memberId: number, teamspaceId: number, day: string, count: number, extra: number, spendCents: number): Promise<void> {
    this.immediate(() => this.recordRow(memberId, teamspaceId, day, count, extra, spendCents));
  }

  private recordRow(memberId: number, teamspaceId: number, day: string, count: number, extra: number, spendCents: number): void {
    const month = day.slice(0, 7);
    this.stmts.bumpDaily.run(memberId, teamspaceId, day, count);
    this.stmts.bumpMemberMonth.run(memberId, month, teamspaceId, count, extra);
    this.stmts.bumpTeamMonth.run(teamspaceId, month, count, extra, spendCents);
  }

  /** Requests per day of a teamspace between two days (inclusive, YYYY-MM-DD); days without requests are absent. */
  async teamDaily(teamspaceId: number, fromDay: string, toDay: string): Promise<{ day: string; requests: number }[]> {
    return this.db
      .prepare('SELECT day, sum(requests) AS requests FROM usage_daily WHERE teamspace_id = ? AND day >= ? AND day <= ? GROUP BY day ORDER BY day')
      .all(teamspaceId, fromDay, toDay) as { day: string; requests: number }[];
  }

  async memberDaily(memberId: number, fromDay: string, toDay: string): Promise<{ day: string; requests: number }[]> {
    return this.db
      .prepare('SELECT day, requests FROM usage_daily WHERE member_id = ? AND day >= ? AND day <= ? ORDER BY day')
      .all(memberId, fromDay, toDay) as { day: string; requests: number }[];
  }

  // ---- members ----

  /** The teamspace's synthetic member for anonymous callers, created on first use (atomically, also across processes). */
  async anonymousMember(teamspaceId: number, name: string, now: string): Promise<number> {
    return this.immediate(() => {
      const row = this.db.prepare('SELECT id FROM members WHERE teamspace_id = ? AND synthetic = 1 ORDER BY id LIMIT 1').get(teamspaceId) as
        | { id: number }
        | undefined;
      if (row) return row.id;
      return Number(
        this.db
          .prepare("INSERT INTO members (teamspace_id, name, email, role, created_at, synthetic) VALUES (?, ?, NULL, 'member', ?, 1)")
          .run(teamspaceId, name, now).lastInsertRowid,
      );
    });
  }

  /** Active people of a teamspace (no synthetic member). */
  async people(teamspaceId: number): Promise<(MemberRow & { key_count: number })[]> {
    return this.db
      .prepare(
        `SELECT m.*, (SELECT count(*) FROM api_keys k WHERE k.member_id = m.id AND k.revoked_at IS NULL) AS key_count
         FROM members m WHERE m.teamspace_id = ? AND m.removed_at IS NULL AND m.synthetic = 0 ORDER BY m.id`,
      )
      .all(teamspaceId) as (MemberRow & { key_count: number })[];
  }

  /** Active people of the whole installation: the license's maxMembers counts seats across teamspaces. */
  async seatCount(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM members WHERE removed_at IS NULL AND synthetic = 0').get() as { n: number }).n;
  }

  /** Every teamspace with its number of active people, oldest (the default) first. */
  async teamspaces(): Promise<(TeamspaceRow & { people: number })[]> {
    return this.db
      .prepare(
        'SELECT t.*, (SELECT count(*) FROM members m WHERE m.teamspace_id = t.id AND m.removed_at IS NULL AND m.synthetic = 0) AS people FROM teamspaces t ORDER BY t.id',
      )
      .all() as (TeamspaceRow & { people: number })[];
  }

  async peopleCount(teamspaceId: number): Promise<number> {
    return (
      this.db.prepare('SELECT count(*) AS n FROM members WHERE teamspace_id = ? AND removed_at IS NULL AND synthetic = 0').get(teamspaceId) as { n: number }
    ).n;
  }

  async ownerCount(teamspaceId: number): Promise<number> {
    return (
      this.db
        .prepare("SELECT count(*) AS n FROM members WHERE teamspace_id = ? AND removed_at IS NULL AND synthetic = 0 AND role = 'owner'")
        .get(teamspaceId) as { n: number }
    ).n;
  }

  async isSynthetic(memberId: number): Promise<boolean> {
    return ((this.db.prepare('SELECT synthetic FROM members WHERE id = ?').get(memberId) as { synthetic: number } | undefined)?.synthetic ?? 0) === 1;
  }

  /** A removed member's name is freed for reuse by renaming the old row. */
  async renameMember(id: number, name: string): Promise<void> {
    this.db.prepare('UPDATE members SET name = ? WHERE id = ?').run(name, id);
  }

  // ---- rules ----

  async insertRule(kind: RuleKind, teamspaceId: number | null, libraryId: string | null, text: string, now: string): Promise<number> {
    return Number(
      this.db
        .prepare('INSERT INTO rules (kind, teamspace_id, library_id, text, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(kind, teamspaceId, libraryId, text, now).lastInsertRowid,
    );
  }

  async rule(id: number): Promise<RuleRow | null> {
    return (this.db.prepare('SELECT * FROM rules WHERE id = ?').get(id) as RuleRow | undefined) ?? null;
  }

  async deleteRule(id: number): Promise<boolean> {
    return this.db.prepare('DELETE FROM rules WHERE id = ?').run(id).changes > 0;
  }

  /** Rules a teamspace sees: its global and team-library rules, and every library-owner rule. */
  async rulesFor(teamspaceId: number): Promise<RuleRow[]> {
    return this.policy.rulesFor(teamspaceId);
  }
}
