// The people and accounting stores on both backends: each SQLite store and its PostgreSQL twin answer
// the same story the same way, and on PostgreSQL the metered limits (plan requests, spending limit,
// research quota) stay exact when several nodes count at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isUniqueViolation } from '../server/store/errors.ts';
import { PgAccountStore } from '../server/store/pg/accounts.ts';
import { PgAuditStore } from '../server/store/pg/audit.ts';
import { PgInvitationStore } from '../server/store/pg/invitations.ts';
import { PgMembershipStore } from '../server/store/pg/membership.ts';
import { PgTeamPolicyReads } from '../server/store/pg/team-policy.ts';
import { TeamCache } from '../server/teams/cache.ts';
import { waitFor } from './helpers/server.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import { PgResearchUsageStore } from '../server/store/pg/research.ts';
import { PgTeamStore } from '../server/store/pg/teams.ts';
import { fail, failure, LATER, pgStores, sqliteStores, STORIES as ACCOUNT_STORIES, STORY_TABLES, T0, T1, T2 } from './helpers/account-stories.ts';
import { membershipStory, newKey, newUser, refusal, ssoStory } from './helpers/membership-stories.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';

const STORIES = { ...ACCOUNT_STORIES, membershipStory, ssoStory };
const UNIQUE = { threw: true, unique: true };
const OTHER_ERROR = { threw: true, unique: false };
const ids = (rows: unknown) => (rows as { id: number }[]).map((r) => r.id);
const field = (row: unknown, name: string) => (row as Record<string, unknown> | null)?.[name];

/** The key answers of each story, whichever backend told it (so that both being wrong alike still fails). */
const EXPECTED: Record<keyof typeof STORIES, (seen: unknown[]) => void> = {
  accountsStory: (s) => {
    // the plan's included requests come from the insert trigger; a duplicate name, hash or member is a unique violation, a missing teamspace not
    assert.deepEqual([s[0], field(s[1], 'included_requests'), field(s[2], 'included_requests'), field(s[4], 'cents_per_extra_request')], [2, 1000, 0, 0.25]);
    assert.deepEqual(s.slice(5, 13), [null, UNIQUE, UNIQUE, OTHER_ERROR, UNIQUE, true, false, 2]);
    // removing bob revoked his other key and kept the earlier revocation's time
    assert.deepEqual(
      [field(s[13], 'key_id'), s[14], field(s[15], 'scope'), s[16], field(s[17], 'revoked_at'), field(s[18], 'revoked_at'), s[19]],
      [1, null, 'all', null, T1, T2, 1],
    );
    assert.deepEqual([ids(s[22]), s[23], s[24], ids(s[25])], [[1], 1, null, [1, 2, 3]]);
  },
  usersStory: (s) => {
    assert.deepEqual(
      [s[0], s[1], field(s[4], 'username'), s[5], field(s[6], 'user_id'), s[7], field(s[8], 'csrf_token'), s[9]],
      [UNIQUE, 2, 'bob', null, 1, null, 'csrf-old', null],
    );
    // a new password ends the other sessions (2), then all (1); disabling ends the user's
    assert.deepEqual([s[10], field(s[11], 'user_id'), s[12], s[13], s[14], s[15], s[16]], [2, 1, null, 1, null, null, T2]);
    assert.deepEqual([s[17], s[18], s[19], (s[20] as { member_name: string }[]).map((u) => u.member_name)], [null, 1, 0, ['ann', 'cy']]);
    assert.deepEqual(s.slice(21), [2, true, false, false, UNIQUE]);
  },
  invitationsStory: (s) => {
    assert.deepEqual(s.slice(0, 9), [UNIQUE, true, false, false, false, false, true, false, false]);
    assert.deepEqual([field(s[9], 'user_id'), field(s[10], 'revoked_at'), s[11], s[12]], [1, T1, null, null]);
    assert.deepEqual([ids(s[13]), ids(s[14]), ...s.slice(15)], [[3, 2, 1], [3, 2], 3, 1, 0]);
  },
  settingsAndAuditStory: (s) => {
    assert.deepEqual(s.slice(0, 4), [null, 'https://b.example', null, null]);
    // the same address bumped its entry; a new one got its own under the cap of 3; past a cap of 2, one overflow entry counted twice
    assert.deepEqual(s[4], [
      ['overflow', 2, T2],
      ['10.0.0.2', 1, T2],
      ['10.0.0.1', 2, T1],
    ]);
    const all = s[5] as { id: number; count: number; last_at: string }[];
    assert.deepEqual([ids(all), all[4].count, all[4].last_at], [[6, 5, 4, 3, 2, 1], 2, T1]);
    assert.deepEqual(s.slice(6, 15).map(ids), [[3, 1], [6, 5, 3, 2, 1], [1], [3], [4, 1], [4], [6, 5], [2, 1], [2]]);
    assert.deepEqual(s.slice(15, 19), [OTHER_ERROR, 1, 0, ['auth.refused', 'auth.refused', 'member.add', 'key.create', 'auth.refused']]);
    assert.deepEqual(s[19], ['first', 'first', 'first']);
  },
  researchStory: (s) => {
    const [no, one, two] = [
      { taken: false, used: 0 },
      { taken: true, used: 1 },
      { taken: true, used: 2 },
    ];
    assert.deepEqual(s, [0, no, 0, one, two, { taken: false, used: 2 }, 1, two, one, 0, 0, { taken: false, used: 2 }]);
  },
  teamsStory: (s) => {
    assert.deepEqual(s.slice(1, 7), [
      null,
      { requests: 0, extra_requests: 0 },
      { requests: 0, extra_requests: 0, spend_cents: 0 },
      { requests: 3, extra_requests: 1 },
      { requests: 4, extra_requests: 2, spend_cents: 0.75 },
      { requests: 1, extra_requests: 0, spend_cents: 0 },
    ]);
    assert.deepEqual(s.slice(7, 10), [
      [
        { day: '2026-11-27', requests: 1 },
        { day: '2026-11-28', requests: 3 },
      ],
      [
        { day: '2026-11-28', requests: 1 },
        { day: '2026-12-01', requests: 1 },
      ],
      [],
    ]);
    assert.deepEqual(
      [...s.slice(10, 14), ids(s[14]), field((s[14] as unknown[])[0], 'key_count'), s[15], (s[16] as { people: number }[]).map((t) => t.people)],
      [true, true, false, false, [1], 2, 1, [1, 0]],
    );
    assert.deepEqual(
      [...s.slice(17, 22), field(s[22], 'text'), s[23], ids(s[24]), ids(s[25]), ...s.slice(26)],
      [
        1,
        1,
        0,
        true,
        false,
        'Prefer v2.',
        null,
        [1, 2],
        [2, 3],
        ['included after 0', 'included after 1', 'freePlanUsedUp after 2', 'extra after 0', 'extra after 1', 'spendingLimit after 2', 'Error: no teamspace'],
        { requests: 2, extra_requests: 0 },
        { requests: 2, extra_requests: 2 },
        { requests: 2, extra_requests: 2, spend_cents: 3 },
      ],
    );
  },
  membershipStory: (s) => {
    assert.deepEqual(s.slice(0, 4), [{ teamspaceId: 1, memberId: 1, keyId: 1 }, 'conflict', { memberId: 2, keyId: 2 }, 'conflict']);
    // ci made with its key; bob's new key keeps bob a member; cy takes the fourth seat and uses up the invitation
    assert.deepEqual(s.slice(4, 10), [3, 'ci', 2, 'member', 1, 1]);
    // no fifth seat; cy taken; a used invitation or an unknown setup link makes no account; eve's wanted member name cy is taken: cy-2
    assert.deepEqual(s.slice(10, 17), ['member_limit_reached', 'conflict', 'forbidden', null, 'forbidden', 'cy-2', 'forbidden']);
    assert.deepEqual(s.slice(17, 21), ['conflict', 'conflict', T2, T2]);
    assert.deepEqual(s.slice(21), ['ann (removed #1)', null, 'validation_error', ['bob:owner', 'ci:member', 'cy:member', 'cy-2:admin', 'ann:member']]);
  },
  ssoStory: (s) => {
    // cy-smith was taken, so the SSO user is cy-smith-2
    assert.deepEqual(s.slice(0, 3), [
      ['cy-smith-2', 'cy-smith-2', 'member', true],
      [true, true, 'admin'],
      [true, true, 'cy-smith-2', 'member'],
    ]);
    assert.deepEqual(s.slice(3), [T2, ['cy-smith:cy-smith@acme:member', 'cy-smith-2:cy-smith-2@other:member']]);
  },
};

type Outcome = 'included' | 'extra' | 'refused';

/** One metered request through countRequests: within the plan, extra at the teamspace's price up to its spending limit, or refused. */
async function meter(t: PgTeamStore, memberId: number, teamspaceId: number, day: string): Promise<Outcome> {
  const [r] = await t.countRequests([{ memberId, teamspaceId }], day, ({ verdict }) => verdict);
  if (r && 'ok' in r) return r.ok === 'included' || r.ok === 'extra' ? r.ok : 'refused';
  throw r?.err;
}

const tally = (outcomes: string[]) => outcomes.reduce<Record<string, number>>((n, o) => ({ ...n, [o]: (n[o] ?? 0) + 1 }), {});

/** Each node (pool) runs `f` 20 times at once; how many times each answer came back, from all of them. */
async function fromNodes(nodes: PgPool[], f: (node: PgPool, i: number) => Promise<string>): Promise<Record<string, number>> {
  return tally((await Promise.all(nodes.map((node) => Promise.all(Array.from({ length: 20 }, (_, i) => f(node, i)))))).flat());
}

/** Four nodes record refused authentications at once: one entry per address up to the cap, then one overflow entry, every one counted. */
async function refusalsAcrossNodes({ pool, url }: { pool: PgPool; url: string }): Promise<void> {
  const entry = {
    at: T1,
    action: 'auth.refused',
    actor_kind: 'anonymous',
    actor_key_id: null,
    actor_name: null,
    teamspace_id: null,
    target: null,
    outcome: 'refused',
    detail: null,
  } as const;
  const nodes = Array.from({ length: 4 }, () => openPgPool(url, { max: 3 }));
  try {
    // the same address from every node: one entry; then a new address per request: three entries and the overflow one
    await fromNodes(nodes, (node) => new PgAuditStore(node).aggregate({ ...entry, source_ip: '10.0.0.1' }, T0, 4, '*').then(() => 'ok'));
    await fromNodes(nodes, (node, i) =>
      new PgAuditStore(node).aggregate({ ...entry, source_ip: `10.1.${nodes.indexOf(node)}.${i}` }, T0, 4, '*').then(() => 'ok'),
    );
  } finally {
    await Promise.all(nodes.map((n) => n.end()));
  }
  const rows = await new PgAuditStore(pool).list({ action: 'auth.refused', limit: 100 });
  const first = rows.find((r) => r.source_ip === '10.0.0.1');
  const overflow = rows.filter((r) => r.source_ip === '*');
  assert.deepEqual([rows.length, first?.count, overflow.length, overflow[0]?.count], [5, 80, 1, 77]);
}

/** Four nodes (pools) send 20 requests each at once per limit; every limit holds to the request. */
async function meteringAcrossNodes({ pool, url }: { pool: PgPool; url: string }): Promise<void> {
  const a = new PgAccountStore(pool);
  const free = await a.createTeamspace('free', 'free', T0);
  await a.updateTeamspace(free, { included_requests: 30 });
  const payg = await a.createTeamspace('payg', 'payg', T0);
  await a.updateTeamspace(payg, { spending_limit_cents: 30, cents_per_extra_request: 1.5 }); // 20 extra requests
  const ann = await a.createMember(free, 'ann', 'owner', null, T0);
  const payers = [await a.createMember(payg, 'bob', 'owner', null, T0), await a.createMember(payg, 'cy', 'member', null, T0)];
  const day = '2026-11-28';
  const nodes = Array.from({ length: 4 }, () => openPgPool(url, { max: 3 }));
  try {
    const each = (f: (teams: PgTeamStore, research: PgResearchUsageStore, i: number) => Promise<string>) =>
      fromNodes(nodes, (node, i) => f(new PgTeamStore(node), new PgResearchUsageStore(node), i));
    assert.deepEqual(await each((t) => meter(t, ann, free, day)), { included: 30, refused: 50 });
    assert.deepEqual(await each((t, _r, i) => meter(t, payers[i % 2], payg, day)), { extra: 20, refused: 60 });
    assert.deepEqual(await each((_t, r) => r.take(ann, '2026-W48', 25).then((x) => String(x.taken))), { true: 25, false: 55 });
    // counting alone (no limit) from every node at once loses no increment either
    assert.deepEqual(await each((t) => t.record(payers[0], payg, '2026-11-29', 1, 0, 0).then(() => 'ok')), { ok: 80 });
    const anonymous = await each((t) => t.anonymousMember(free, '(anonymous)', T0).then(String));
    assert.equal(Object.keys(anonymous).length, 1, 'one anonymous member, whichever node made it');
  } finally {
    await Promise.all(nodes.map((n) => n.end()));
  }
  const t = new PgTeamStore(pool);
  assert.deepEqual(await t.memberMonth(ann, '2026-11'), { requests: 30, extra_requests: 0 });
  assert.deepEqual(await t.teamMonth(payg, '2026-11'), { requests: 100, extra_requests: 20, spend_cents: 30 });
  assert.deepEqual(await t.teamDaily(payg, day, '2026-11-30'), [
    { day, requests: 20 },
    { day: '2026-11-29', requests: 80 },
  ]);
  assert.equal(await new PgResearchUsageStore(pool).used(ann, '2026-W48'), 25);
}

/** Four nodes add members, remove owners and redeem one invitation at once: the seats, the last owner and the invitation hold. */
async function membershipAcrossNodes({ pool, url }: { pool: PgPool; url: string }): Promise<void> {
  const ms = new PgMembershipStore(pool);
  const acme = await ms.createTeamspace('acme', 'pro', { name: 'ann', role: 'owner', email: null, maxSeats: 10, now: T0 }, newKey('ann'));
  const ts = acme.teamspaceId;
  const bob = await ms.addMember({ teamspaceId: ts, name: 'bob', role: 'owner', email: null, maxSeats: 10, now: T0 });
  const invitation = await new PgInvitationStore(pool).insert({
    teamspaceId: ts,
    role: 'member',
    username: null,
    email: null,
    tokenHash: 'inv',
    invitedBy: null,
    now: T0,
    expiresAt: LATER,
  });
  const nodes = Array.from({ length: 4 }, () => openPgPool(url, { max: 3 }));
  try {
    const each = (f: (m: PgMembershipStore, i: number, node: number) => Promise<unknown>) =>
      fromNodes(nodes, (node, i) => refusal(() => f(new PgMembershipStore(node), i, nodes.indexOf(node))));
    // 80 new people for the 8 free seats
    assert.deepEqual(await each((m, i, n) => m.addMember({ teamspaceId: ts, name: `p${n}-${i}`, role: 'member', email: null, maxSeats: 10, now: T1 })), {
      ok: 8,
      member_limit_reached: 72,
    });
    // 80 accounts from one invitation: one is made
    assert.deepEqual(await each((m, i, n) => m.createUser(newUser(ts, `u${n}-${i}`, { invitationId: invitation }))), { ok: 1, forbidden: 79 });
    // both owners removed from every node at once: whichever goes first goes (again and again), the other stays
    assert.deepEqual(await each((m, i) => m.removeMember(i % 2 ? acme.memberId : bob.memberId, T2)), { ok: 40, conflict: 40 });
  } finally {
    await Promise.all(nodes.map((n) => n.end()));
  }
  const accounts = new PgAccountStore(pool);
  const owners = (await accounts.members(ts)).filter((m) => m.role === 'owner');
  assert.deepEqual([owners.length, await accounts.activeMemberCount(ts)], [1, 10]);
}

/** Four nodes starting together on an empty database: one first key between them (KeyService.bootstrap). */
async function firstKeyAcrossNodes({ pool, url }: { pool: PgPool; url: string }): Promise<void> {
  const teamspaceId = await new PgAccountStore(pool).createTeamspace('default', 'enterprise', T0);
  const nodes = Array.from({ length: 4 }, () => openPgPool(url, { max: 2 }));
  try {
    const made = await Promise.all(
      nodes.map((node, n) => new PgMembershipStore(node).createFirstKey({ ...newKey(`first-${n}`), teamspaceId, memberName: 'admin', role: 'owner', now: T0 })),
    );
    assert.equal(made.filter((m) => m !== null).length, 1);
    assert.equal(await new PgAccountStore(pool).keyCount(), 1);
  } finally {
    await Promise.all(nodes.map((n) => n.end()));
  }
}

/** Each node's team cache over its in-memory copy of the policies: a change through a node is seen there at once, another node's within its refresh. */
async function policiesAcrossNodes({ url }: { url: string }): Promise<void> {
  const [a, b] = [openPgPool(url, { max: 2 }), openPgPool(url, { max: 2 })];
  const reads: PgTeamPolicyReads[] = [];
  try {
    const accounts = new PgAccountStore(a);
    const ts = await accounts.createTeamspace('acme', 'pro', T0);
    reads.push(await PgTeamPolicyReads.open(a, 60_000), await PgTeamPolicyReads.open(b, 50));
    const [cacheA, cacheB] = reads.map((r) => new TeamCache(r, 0));
    assert.deepEqual([cacheA!.rules(ts).global, cacheB!.rules(ts).global], [[], []]);
    // a rule and a policy written through node A: A's cache has them as soon as the write (and its invalidate) returned
    await new PgTeamStore(a).insertRule('global', ts, null, 'Prefer v2.', T0);
    await accounts.updateTeamspace(ts, { policy_json: JSON.stringify({ sourceTypes: { websites: { enabled: false } } }) });
    await cacheA!.invalidate();
    assert.deepEqual(cacheA!.rules(ts).global, ['Prefer v2.']);
    assert.equal(cacheA!.compiled(ts).disabled.has('websites'), true);
    // node B, which wrote nothing, sees both within its refresh
    await waitFor(() => cacheB!.rules(ts).global.length === 1 && cacheB!.compiled(ts).disabled.has('websites'), 5000);
    assert.equal(reads[1]!.teamspace(ts)?.name, 'acme');
    assert.equal(reads[1]!.teamspace(9999), null);
  } finally {
    reads.forEach((r) => r.close());
    await Promise.all([a.end(), b.end()]);
  }
}

/** What only PostgreSQL has: writes inside immediate(), the cross-node data version, a key's last use from several nodes. */
async function pgOnly({ pool, url }: { pool: PgPool; url: string }): Promise<void> {
  const a = new PgAccountStore(pool);
  const t = new PgTeamStore(pool);
  const ts = await a.createTeamspace('default', 'pro', T0);
  const ann = await a.createMember(ts, 'ann', 'owner', null, T0);
  // what the callback writes, through any store, commits with it; a throw undoes it all
  await t.immediate(async () => [await t.record(ann, ts, '2026-11-28', 5, 0, 0), await a.createMember(ts, 'bob', 'member', null, T0)]);
  const undone = await failure(() =>
    t.immediate(async () => [await t.record(ann, ts, '2026-11-28', 100, 0, 0), await a.createMember(ts, 'cy', 'member', null, T0), fail()]),
  );
  // a nested immediate() is a savepoint, as SQLite's nested transaction: its throw, caught, undoes only its own writes
  await t.immediate(async () => {
    await a.setMemberRole(ann, 'admin');
    await t.immediate(async () => [await t.record(ann, ts, '2026-11-28', 100, 0, 0), fail()]).catch(() => undefined);
  });
  const names = (await a.members(ts)).map((m) => `${m.name}:${m.role}`);
  assert.deepEqual([undone.threw, names, await t.memberMonth(ann, '2026-11')], [true, ['ann:admin', 'bob:member'], { requests: 5, extra_requests: 0 }]);
  // a statement that failed aborts the transaction even if the callback caught its error: immediate() does not pretend it committed
  const swallowed = await failure(() =>
    t.immediate(() => t.insertRule('bogus' as 'global', ts, null, 'x', T0).catch(() => t.record(ann, ts, '2026-11-28', 1, 0, 0))),
  );
  assert.equal(swallowed.threw, true);
  // another node's change to a teamspace or a rule changes the data version TeamCache checks; nothing else does
  const other = openPgPool(url, { max: 1 });
  try {
    const v0 = await t.dataVersion();
    await t.record(ann, ts, '2026-11-28', 1, 0, 0);
    assert.equal(await t.dataVersion(), v0, 'counters are not what the cache holds');
    await new PgTeamStore(other).insertRule('global', ts, null, 'Prefer v2.', T0);
    const v1 = await t.dataVersion();
    await new PgAccountStore(other).updateTeamspace(ts, { policy_json: '{}' });
    const v2 = await t.dataVersion();
    assert.ok(v0 !== v1 && v1 !== v2 && Number.isSafeInteger(v2), `${v0} ${v1} ${v2}`);
  } finally {
    await other.end();
  }
  // nodes touch a key in any order: its last use never goes back
  const key = await a.insertKey(ann, 'k', 'stk_a', 'h-a', T0);
  await a.touchKey(key, T2);
  await a.touchKey(key, T1);
  assert.equal((await a.key(key))?.last_used_at, T2);
  // a NUL in an entry's target (from a request) is kept as U+FFFD: PostgreSQL's text cannot hold it, and the entry must not be lost
  const audit = new PgAuditStore(pool);
  const nul = {
    at: T0,
    actor_kind: 'anonymous',
    actor_key_id: null,
    actor_name: null,
    teamspace_id: null,
    source_ip: null,
    outcome: 'refused',
    detail: null,
  } as const;
  await audit.append({ ...nul, action: 'auth.refused', target: '/a\u0000b' });
  assert.equal((await audit.list({ limit: 1 }))[0].target, '/a\uFFFDb');
  // a foreign key error is not a unique one, on either backend
  assert.equal(isUniqueViolation({ code: '23503' }) || isUniqueViolation({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }) || isUniqueViolation(null), false);
}

describe('people and accounting stores on SQLite and PostgreSQL', () => {
  let server: TestPostgres;
  const fresh = (name: string): Promise<{ pool: PgPool; url: string }> => server.migratedDatabase(name.toLowerCase());
  before(async () => {
    server = await startPostgres('debian');
  });
  after(async () => {
    await server?.close();
  });

  test('each store tells the same story on both backends', async () => {
    const { pool } = await fresh('stories');
    for (const [name, story] of Object.entries(STORIES)) {
      const onSqlite = await story(sqliteStores());
      // each story on empty tables, ids from 1, as on SQLite's new in-memory database (quicker than a database each)
      await pool.query(`TRUNCATE ${STORY_TABLES.join(', ')} RESTART IDENTITY CASCADE`);
      const onPg = await story(pgStores(pool));
      assert.deepEqual(onPg, onSqlite, name);
      EXPECTED[name as keyof typeof STORIES](onSqlite);
    }
  });

  test('metered limits stay exact when four nodes count at once', async () => {
    await meteringAcrossNodes(await fresh('metering'));
  });

  test('seats, the last owner and an invitation hold when four nodes change people at once', async () => {
    await membershipAcrossNodes(await fresh('membership'));
  });

  test('nodes starting together on an empty database make one first key', async () => {
    await firstKeyAcrossNodes(await fresh('first_key'));
  });

  test("each node's team cache sees its own policy changes at once and the other nodes' within its refresh", async () => {
    await policiesAcrossNodes(await fresh('policies'));
  });

  test('refused authentications stay capped and counted when four nodes record them at once', async () => {
    await refusalsAcrossNodes(await fresh('refusals'));
  });

  test('the PostgreSQL twins where several nodes differ from one SQLite file', async () => {
    await pgOnly(await fresh('pg_only'));
  });
});
