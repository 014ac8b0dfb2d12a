import type { PgMigration } from './migration.ts';

/**
 * Metering in one statement (PgTeamStore.countRequests). Before, a batch locked its counter rows in
 * one round trip, the node decided, and a second round trip wrote and committed: the rows stayed
 * locked while the answer crossed the network and waited for a busy node's event loop. Every
 * request of a teamspace goes through its month row, so the cluster's metering of that teamspace
 * was as fast as that wait allowed: with two nodes on the bench box the lock statement waited 28 ms
 * per batch. Here the database decides and counts under the locks, released at the statement's end.
 *
 * The rule is meter-rule.ts's `meterVerdict`, step for step (the plan's included requests, then a
 * free plan's refusal, then the spending limit with its 1e-9 tolerance; the spend added one float
 * at a time, as SQLite's twin adds it), and the verdicts are its names; the store tests judge the
 * same cases on both backends. Rows are locked as before: the batch's teamspace months, then its
 * members' months, each in id order, so two batches never deadlock.
 */
export const m008: PgMigration = {
  version: 8,
  name: 'count-requests',
  sql: `
CREATE FUNCTION stacks_count_requests(p_members BIGINT[], p_teamspaces BIGINT[], p_day TEXT)
RETURNS TABLE (at INT, verdict TEXT, used BIGINT, teamspace JSONB)
LANGUAGE plpgsql AS $$
DECLARE
  v_month TEXT := left(p_day, 7);
  t teamspaces%ROWTYPE;
  v_extra INT;
  v_spent DOUBLE PRECISION;
BEGIN
  INSERT INTO usage_teamspace_monthly AS u (teamspace_id, month)
    SELECT id, v_month FROM teamspaces WHERE id = ANY (p_teamspaces) ORDER BY id
    ON CONFLICT (teamspace_id, month) DO UPDATE SET requests = u.requests;
  INSERT INTO usage_member_monthly AS u (member_id, month, teamspace_id)
    SELECT DISTINCT ON (m.member_id) m.member_id, v_month, m.teamspace_id
      FROM unnest(p_members, p_teamspaces) AS m (member_id, teamspace_id)
      WHERE m.teamspace_id IN (SELECT id FROM teamspaces) ORDER BY m.member_id
    ON CONFLICT (member_id, month) DO UPDATE SET requests = u.requests;
  FOR i IN 1 .. coalesce(array_length(p_members, 1), 0) LOOP
    at := i;
    SELECT * INTO t FROM teamspaces WHERE id = p_teamspaces[i];
    IF NOT FOUND THEN
      verdict := 'noTeamspace'; used := 0; teamspace := NULL;
      RETURN NEXT;
      CONTINUE;
    END IF;
    teamspace := to_jsonb(t);
    SELECT requests INTO used FROM usage_member_monthly WHERE member_id = p_members[i] AND month = v_month;
    SELECT spend_cents INTO v_spent FROM usage_teamspace_monthly WHERE teamspace_id = t.id AND month = v_month;
    IF used < (CASE WHEN t.plan = 'payg' THEN 0 ELSE t.included_requests END) THEN
      verdict := 'included';
    ELSIF t.plan = 'free' THEN
      verdict := 'freePlanUsedUp';
    ELSIF t.spending_limit_cents IS NOT NULL
      AND v_spent + t.cents_per_extra_request > t.spending_limit_cents::float8 + '1e-9'::float8 THEN
      verdict := 'spendingLimit';
    ELSE
      verdict := 'extra';
    END IF;
    IF verdict IN ('included', 'extra') THEN
      v_extra := (verdict = 'extra')::int;
      UPDATE usage_member_monthly SET requests = requests + 1, extra_requests = extra_requests + v_extra
        WHERE member_id = p_members[i] AND month = v_month;
      UPDATE usage_teamspace_monthly SET requests = requests + 1, extra_requests = extra_requests + v_extra,
          spend_cents = spend_cents + CASE WHEN v_extra = 1 THEN t.cents_per_extra_request ELSE 0 END
        WHERE teamspace_id = t.id AND month = v_month;
      INSERT INTO usage_daily (member_id, teamspace_id, day, requests) VALUES (p_members[i], t.id, p_day, 1)
        ON CONFLICT (member_id, day) DO UPDATE SET requests = usage_daily.requests + 1;
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;`,
};
