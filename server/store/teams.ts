import type { Db } from './db.ts';

import type { MemberRow, TeamspaceRow } from './accounts.ts';

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
 * SQL of the teamspaces feature: policies, usage counters, rules, members beyond the basics
 * of AccountStore. Counter updates are single UPSERTs (`requests = requests + 1`) inside one
 * IMMEDIATE transaction per request, so concurrent writers (threads, processes) never lose one.
 */
export class TeamStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      teamspace: db.prepare('SELECT * FROM teamspaces WHERE id = ?'),
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

  /** Changes when another connection (e.g. the CLI) commits; lets in-memory caches stay correct across processes. */
  dataVersion(): number {
    return this.stmts.dataVersion.get() as number;
  }

  /** Runs fn in a BEGIN IMMEDIATE transaction: the read-decide-write of one request is atomic, also across processes. */
  immediate<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  teamspace(id: number): TeamspaceRow | null {
    return (this.stmts.teamspace.get(id) as TeamspaceRow | undefined) ?? null;
  }

  // ---- usage ----

  memberMonth(memberId: number, month: string): { requests: number; extra_requests: number } {
    return (this.stmts.memberMonth.get(memberId, month) as { requests: number; extra_requests: number } | undefined) ?? { requests: 0, extra_requests: 0 };
  }

  teamMonth(teamspaceId: number, month: string): MonthlyTeamRow {
    return (this.stmts.teamMonth.get(teamspaceId, month) as MonthlyTeamRow | undefined) ?? { requests: 0, extra_requests: 0, spend_cents: 0 };
  }

  /** Adds `count` requests (of which `extra` beyond the plan, costing `spendCents`) to the day and month counters. */
  record(memberId: number, teamspaceId: number, day: string, count: number, extra: number, spendCents: number): void {
    const month = day.slice(0, 7);
    this.stmts.bumpDaily.run(memberId, teamspaceId, day, count);
    this.stmts.bumpMemberMonth.run(memberId, month, teamspaceId, count, extra);
    this.stmts.bumpTeamMonth.run(teamspaceId, month, count, extra, spendCents);
  }

  /** Requests per day of a teamspace between two days (inclusive, YYYY-MM-DD); days without requests are absent. */
  teamDaily(teamspaceId: number, fromDay: string, toDay: string): { day: string; requests: number }[] {
    return this.db
      .prepare('SELECT day, sum(requests) AS requests FROM usage_daily WHERE teamspace_id = ? AND day >= ? AND day <= ? GROUP BY day ORDER BY day')
      .all(teamspaceId, fromDay, toDay) as { day: string; requests: number }[];
  }

  memberDaily(memberId: number, fromDay: string, toDay: string): { day: string; requests: number }[] {
    return this.db
      .prepare('SELECT day, requests FROM usage_daily WHERE member_id = ? AND day >= ? AND day <= ? ORDER BY day')
      .all(memberId, fromDay, toDay) as { day: string; requests: number }[];
  }

  // ---- members ----

  /** The teamspace's synthetic member for anonymous callers, created on first use (atomically, also across processes). */
  anonymousMember(teamspaceId: number, name: string, now: string): number {
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
  people(teamspaceId: number): (MemberRow & { key_count: number })[] {
    return this.db
      .prepare(
        `SELECT m.*, (SELECT count(*) FROM api_keys k WHERE k.member_id = m.id AND k.revoked_at IS NULL) AS key_count
         FROM members m WHERE m.teamspace_id = ? AND m.removed_at IS NULL AND m.synthetic = 0 ORDER BY m.id`,
      )
      .all(teamspaceId) as (MemberRow & { key_count: number })[];
  }

  /** Active people of the whole installation: the license's maxMembers counts seats across teamspaces. */
  seatCount(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM members WHERE removed_at IS NULL AND synthetic = 0').get() as { n: number }).n;
  }

  /** Every teamspace with its number of active people, oldest (the default) first. */
  teamspaces(): (TeamspaceRow & { people: number })[] {
    return this.db
      .prepare(
        'SELECT t.*, (SELECT count(*) FROM members m WHERE m.teamspace_id = t.id AND m.removed_at IS NULL AND m.synthetic = 0) AS people FROM teamspaces t ORDER BY t.id',
      )
      .all() as (TeamspaceRow & { people: number })[];
  }

  peopleCount(teamspaceId: number): number {
    return (
      this.db.prepare('SELECT count(*) AS n FROM members WHERE teamspace_id = ? AND removed_at IS NULL AND synthetic = 0').get(teamspaceId) as { n: number }
    ).n;
  }

  ownerCount(teamspaceId: number): number {
    return (
      this.db
        .prepare("SELECT count(*) AS n FROM members WHERE teamspace_id = ? AND removed_at IS NULL AND synthetic = 0 AND role = 'owner'")
        .get(teamspaceId) as { n: number }
    ).n;
  }

  isSynthetic(memberId: number): boolean {
    return ((this.db.prepare('SELECT synthetic FROM members WHERE id = ?').get(memberId) as { synthetic: number } | undefined)?.synthetic ?? 0) === 1;
  }

  /** A removed member's name is freed for reuse by renaming the old row. */
  renameMember(id: number, name: string): void {
    this.db.prepare('UPDATE members SET name = ? WHERE id = ?').run(name, id);
  }

  // ---- rules ----

  insertRule(kind: RuleKind, teamspaceId: number | null, libraryId: string | null, text: string, now: string): number {
    return Number(
      this.db
        .prepare('INSERT INTO rules (kind, teamspace_id, library_id, text, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(kind, teamspaceId, libraryId, text, now).lastInsertRowid,
    );
  }

  rule(id: number): RuleRow | null {
    return (this.db.prepare('SELECT * FROM rules WHERE id = ?').get(id) as RuleRow | undefined) ?? null;
  }

  deleteRule(id: number): boolean {
    return this.db.prepare('DELETE FROM rules WHERE id = ?').run(id).changes > 0;
  }

  /** Rules a teamspace sees: its global and team-library rules, and every library-owner rule. */
  rulesFor(teamspaceId: number): RuleRow[] {
    return this.db.prepare("SELECT * FROM rules WHERE teamspace_id = ? OR kind = 'library_own' ORDER BY id").all(teamspaceId) as RuleRow[];
  }
}
