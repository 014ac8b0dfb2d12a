// The stories told to both backends by test/store-postgres-accounts.test.ts: one per people-and-accounting
// store, each a sequence of calls whose answers are collected, to compare SQLite's with PostgreSQL's.
import { openDb } from '../../server/store/db.ts';
import { AccountStore } from '../../server/store/accounts.ts';
import { AuditStore } from '../../server/store/audit.ts';
import { isUniqueViolation } from '../../server/store/errors.ts';
import { InvitationStore } from '../../server/store/invitations.ts';
import { MembershipStore } from '../../server/store/membership.ts';
import { ResearchUsageStore } from '../../server/store/research.ts';
import { SettingsStore } from '../../server/store/settings.ts';
import { TeamStore } from '../../server/store/teams.ts';
import { UserStore } from '../../server/store/users.ts';
import { PgAccountStore } from '../../server/store/pg/accounts.ts';
import { PgAuditStore } from '../../server/store/pg/audit.ts';
import { PgInvitationStore } from '../../server/store/pg/invitations.ts';
import { PgMembershipStore } from '../../server/store/pg/membership.ts';
import type { PgPool } from '../../server/store/pg/pool.ts';
import { PgResearchUsageStore } from '../../server/store/pg/research.ts';
import type { SameShape } from '../../server/store/pg/same-shape.ts';
import { PgSettingsStore } from '../../server/store/pg/settings.ts';
import { PgTeamStore } from '../../server/store/pg/teams.ts';
import { PgUserStore } from '../../server/store/pg/users.ts';
import { asAsync } from './postgres.ts';

export interface Stores {
  accounts: SameShape<AccountStore>;
  users: SameShape<UserStore>;
  invitations: SameShape<InvitationStore>;
  settings: SameShape<SettingsStore>;
  audit: SameShape<AuditStore>;
  research: SameShape<ResearchUsageStore>;
  teams: SameShape<Omit<TeamStore, 'policy'>>;
  membership: SameShape<MembershipStore>;
}

export function sqliteStores(): Stores {
  const db = openDb(':memory:');
  return {
    accounts: asAsync(new AccountStore(db)),
    users: asAsync(new UserStore(db)),
    invitations: asAsync(new InvitationStore(db)),
    settings: asAsync(new SettingsStore(db)),
    audit: asAsync(new AuditStore(db)),
    research: asAsync(new ResearchUsageStore(db)),
    teams: asAsync(new TeamStore(db)),
    membership: new MembershipStore(db),
  };
}

export function pgStores(pool: PgPool): Stores {
  return {
    accounts: new PgAccountStore(pool),
    users: new PgUserStore(pool),
    invitations: new PgInvitationStore(pool),
    settings: new PgSettingsStore(pool),
    audit: new PgAuditStore(pool),
    research: new PgResearchUsageStore(pool),
    teams: new PgTeamStore(pool),
    membership: new PgMembershipStore(pool),
  };
}

export const T0 = '2026-11-28T10:00:00.000Z';
export const T1 = '2026-11-28T11:00:00.000Z';
export const T2 = '2026-11-28T12:00:00.000Z';
export const LATER = '2026-12-05T10:00:00.000Z';

/** What a call threw: whether it threw, and whether as a unique-constraint violation. */
export async function failure(call: () => Promise<unknown>): Promise<{ threw: boolean; unique: boolean }> {
  try {
    await call();
    return { threw: false, unique: false };
  } catch (err) {
    return { threw: true, unique: isUniqueViolation(err) };
  }
}

async function accountsStory({ accounts: a }: Stores): Promise<unknown[]> {
  const seen: unknown[] = [];
  const free = await a.createTeamspace('default', 'free', T0);
  const payg = await a.createTeamspace('payg', 'payg', T0);
  seen.push(await a.teamspaceCount(), await a.teamspace(free), await a.teamspace(payg), (await a.firstTeamspace())?.id === free);
  await a.updateTeamspace(payg, { spending_limit_cents: 500, cents_per_extra_request: 0.25, policy_json: '{"sources":{}}' });
  await a.updateTeamspace(payg, {});
  seen.push(await a.teamspaceByName('payg'), await a.teamspaceByName('nope'), await failure(() => a.createTeamspace('payg', 'pro', T0)));
  const ann = await a.createMember(free, 'ann', 'owner', 'ann@example.com', T0);
  const bob = await a.createMember(free, 'bob', 'member', null, T0);
  await a.createMember(payg, 'ann', 'admin', null, T0); // the same name in another teamspace
  seen.push(await failure(() => a.createMember(free, 'bob', 'member', null, T0)), await failure(() => a.createMember(999, 'x', 'member', null, T0)));
  await a.setMemberRole(bob, 'admin');
  const k1 = await a.insertKey(ann, 'ann key', 'stk_ab', 'hash-1', T0);
  const k2 = await a.insertKey(bob, 'bob key', 'stk_cd', 'hash-2', T0, 'read');
  const k3 = await a.insertKey(bob, 'bob ci', 'stk_ef', 'hash-3', T0);
  seen.push(await failure(() => a.insertKey(ann, 'dup', 'stk_gh', 'hash-1', T0)));
  await a.touchKey(k1, T1);
  seen.push(await a.revokeKey(k2, T1), await a.revokeKey(k2, T2), await a.keyCount());
  seen.push(await a.principalByHash('hash-1'), await a.principalByHash('hash-2'), await a.principalByHash('hash-3'));
  await a.removeMember(bob, T2);
  seen.push(await a.principalByHash('hash-3'), await a.key(k2), await a.key(k3), await a.keyCount());
  seen.push(await a.member(bob), await a.memberByName(free, 'ann'), await a.members(free), await a.activeMemberCount(free), await a.member(9999));
  seen.push(await a.keys());
  return seen;
}

async function usersStory({ accounts: a, users: u }: Stores): Promise<unknown[]> {
  const seen: unknown[] = [];
  const ts = await a.createTeamspace('default', 'enterprise', T0);
  const [m1, m2, m3] = [
    await a.createMember(ts, 'ann', 'owner', null, T0),
    await a.createMember(ts, 'bob', 'member', null, T0),
    await a.createMember(ts, 'cy', 'admin', null, T0),
  ];
  const ann = await u.insert({ memberId: m1, username: 'ann', passwordHash: 'scrypt$1', ssoIssuer: null, ssoSubject: null, now: T0 });
  const bob = await u.insert({ memberId: m2, username: 'bob', passwordHash: null, ssoIssuer: 'https://idp', ssoSubject: 'sub-1', now: T0 });
  seen.push(await failure(() => u.insert({ memberId: m3, username: 'ann', passwordHash: null, ssoIssuer: null, ssoSubject: null, now: T0 })));
  seen.push(await u.count(), await u.byId(ann), await u.byUsername('bob'), await u.bySubject('https://idp', 'sub-1'), await u.bySubject('https://idp', 'x'));
  await u.signedIn(ann, T1);
  await u.relink(bob, m3);
  for (const [hash, user] of [
    ['s1', ann],
    ['s2', ann],
    ['s3', ann],
    ['s4', bob],
  ] as const)
    await u.insertSession(hash, user, `csrf-${hash}`, T0, LATER);
  await u.insertSession('old', bob, 'csrf-old', T0, T1);
  seen.push(await u.session('s1', T2), await u.session('old', T2), await u.session('old', T0), await u.session('none', T0));
  seen.push(await u.setPassword(ann, 'scrypt$2', 's1'), await u.session('s1', T2), await u.session('s2', T2));
  seen.push(await u.setPassword(ann, 'scrypt$3', null), await u.session('s1', T2));
  await u.setDisabled(bob, T2);
  seen.push(await u.session('s4', T2), (await u.byId(bob))?.disabled_at);
  await u.setDisabled(bob, null);
  await u.insertSession('s5', bob, 'csrf-5', T2, LATER);
  await u.deleteSession('s5');
  await u.insertSession('s6', bob, 'csrf-6', T0, T1);
  seen.push(await u.session('s5', T2), await u.pruneSessions(T2), await u.pruneSessions(T2), await u.list());
  await u.insertSetupToken('tok', T0, T1);
  await u.insertSetupToken('expired', T0, T0);
  seen.push(await u.setupTokenCount(), await u.useSetupToken('tok', T0), await u.useSetupToken('tok', T0), await u.useSetupToken('expired', T0));
  seen.push(await failure(() => u.insertSetupToken('tok', T0, T1)));
  return seen;
}

async function invitationsStory({ accounts: a, users: u, invitations: inv }: Stores): Promise<unknown[]> {
  const seen: unknown[] = [];
  const ts = await a.createTeamspace('default', 'enterprise', T0);
  const other = await a.createTeamspace('other', 'pro', T0);
  const user = await u.insert({
    memberId: await a.createMember(ts, 'ann', 'owner', null, T0),
    username: 'ann',
    passwordHash: null,
    ssoIssuer: null,
    ssoSubject: null,
    now: T0,
  });
  const base = { teamspaceId: ts, role: 'member' as const, username: null, email: null, invitedBy: 'ann', now: T0, expiresAt: LATER };
  const i1 = await inv.insert({ ...base, tokenHash: 'h1', username: 'bob' });
  const i2 = await inv.insert({ ...base, tokenHash: 'h2', email: 'cy@example.com', role: 'admin' });
  const i3 = await inv.insert({ ...base, tokenHash: 'h3', expiresAt: T1 });
  await inv.insert({ ...base, tokenHash: 'h4', teamspaceId: other, invitedBy: null });
  seen.push(await failure(() => inv.insert({ ...base, tokenHash: 'h1' })));
  seen.push(await inv.use(i1, user, T0), await inv.use(i1, user, T0), await inv.use(i3, user, T2));
  seen.push(
    await inv.revoke(i1, ts, T1),
    await inv.revoke(i2, other, T1),
    await inv.revoke(i2, ts, T1),
    await inv.revoke(i2, ts, T2),
    await inv.use(i2, user, T1),
  );
  seen.push(await inv.byId(i1), await inv.byTokenHash('h2'), await inv.byTokenHash('nope'), await inv.byId(999));
  seen.push(await inv.list(ts), await inv.list(ts, 2), await inv.count(ts), await inv.count(other), await inv.count(999));
  return seen;
}

async function settingsAndAuditStory({ accounts: a, settings: s, audit }: Stores): Promise<unknown[]> {
  const seen: unknown[] = [];
  seen.push(await s.get('public_url'));
  await s.set('public_url', 'https://a.example', T0);
  await s.set('public_url', 'https://b.example', T1);
  await s.set('other', 'x', T1);
  seen.push(await s.get('public_url'));
  await s.set('other', null, T2);
  await s.set('never', null, T2);
  seen.push(await s.get('other'), await s.get('never'));
  const ts = await a.createTeamspace('default', 'enterprise', T0);
  const entry = {
    actor_kind: 'key' as const,
    actor_key_id: 7,
    actor_name: 'ann',
    teamspace_id: ts,
    target: '/a/b',
    source_ip: '10.0.0.1',
    outcome: 'ok' as const,
    detail: null,
  };
  await audit.append({ ...entry, at: T0, action: 'library.delete' });
  await audit.append({
    ...entry,
    at: T0,
    action: 'auth.refused',
    actor_kind: 'anonymous',
    actor_key_id: null,
    actor_name: null,
    teamspace_id: null,
    outcome: 'refused',
  });
  await audit.append({ ...entry, at: T1, action: 'key.create', actor_kind: 'operator', actor_key_id: null, actor_name: null, detail: '{"n":1}' });
  await audit.append({ ...entry, at: T1, action: 'member.add', actor_kind: 'user', actor_key_id: null, teamspace_id: 999 });
  // a flood of refusals: the same address bumps its entry, new addresses get entries up to the cap, then one overflow entry
  const refused = {
    ...entry,
    action: 'auth.refused',
    actor_kind: 'anonymous' as const,
    actor_key_id: null,
    actor_name: null,
    teamspace_id: null,
    outcome: 'refused' as const,
  };
  await audit.aggregate({ ...refused, at: T1, source_ip: '10.0.0.1' }, T0, 3, 'overflow');
  await audit.aggregate({ ...refused, at: T2, source_ip: '10.0.0.2' }, T0, 3, 'overflow');
  await audit.aggregate({ ...refused, at: T2, source_ip: '10.0.0.3' }, T0, 2, 'overflow');
  await audit.aggregate({ ...refused, at: T2, source_ip: '10.0.0.4' }, T0, 2, 'overflow');
  seen.push((await audit.list({ limit: 20, action: 'auth.refused' })).map((r) => [r.source_ip, r.count, r.last_at]));
  const q = { limit: 10 };
  seen.push(await audit.list(q), await audit.list({ ...q, teamspaceId: ts }), await audit.list({ ...q, teamspaceId: ts, withInstance: true }));
  seen.push(
    await audit.list({ ...q, actor: 'key:7' }),
    await audit.list({ ...q, actor: 'operator' }),
    await audit.list({ ...q, actor: 'ann' }),
    await audit.list({ ...q, action: 'member.add' }),
  );
  seen.push(await audit.list({ ...q, since: T2 }), await audit.list({ ...q, until: T1 }), await audit.list({ ...q, before: 3, limit: 1 }));
  seen.push(await failure(() => audit.append({ ...entry, at: T0, action: 'x', outcome: 'maybe' as 'ok' })));
  seen.push(
    await audit.prune(T1),
    await audit.prune(T1),
    (await audit.list(q)).map((r) => r.action),
  );
  // a claimed setting keeps the first value it was given
  seen.push([await s.claim('secret', 'first', T0), await s.claim('secret', 'second', T1), await s.get('secret')]);
  return seen;
}

async function researchStory({ accounts: a, research: r }: Stores): Promise<unknown[]> {
  const ts = await a.createTeamspace('default', 'enterprise', T0);
  const m = await a.createMember(ts, 'ann', 'owner', null, T0);
  const seen: unknown[] = [await r.used(m, '2026-W48'), await r.take(m, '2026-W48', 0), await r.used(m, '2026-W48')];
  for (let i = 0; i < 3; i++) seen.push(await r.take(m, '2026-W48', 2));
  await r.refund(m, '2026-W48');
  seen.push(await r.used(m, '2026-W48'), await r.take(m, '2026-W48', 2), await r.take(m, '2026-W49', 1));
  await r.refund(m, '2026-W49');
  await r.refund(m, '2026-W49');
  await r.refund(m, '2026-W50'); // no row: nothing to give back
  seen.push(await r.used(m, '2026-W49'), await r.used(m, '2026-W50'), await r.take(m, '2026-W48', 1));
  return seen;
}

async function teamsStory({ accounts: a, teams: t }: Stores): Promise<unknown[]> {
  const ts = await a.createTeamspace('default', 'pro', T0);
  const other = await a.createTeamspace('other', 'free', T0);
  const [ann, bob] = [await a.createMember(ts, 'ann', 'owner', null, T0), await a.createMember(ts, 'bob', 'member', null, T0)];
  await a.insertKey(ann, 'k', 'stk_a', 'h-a', T0);
  await a.insertKey(ann, 'k2', 'stk_b', 'h-b', T0);
  await a.revokeKey(await a.insertKey(bob, 'k3', 'stk_c', 'h-c', T0), T1);
  const seen: unknown[] = [await t.teamspace(ts), await t.teamspace(999), await t.memberMonth(ann, '2026-11'), await t.teamMonth(ts, '2026-11')];
  await t.record(ann, ts, '2026-11-27', 1, 0, 0);
  await t.record(ann, ts, '2026-11-28', 2, 1, 0.25);
  await t.record(bob, ts, '2026-11-28', 1, 1, 0.5);
  await t.record(bob, ts, '2026-12-01', 1, 0, 0);
  seen.push(await t.memberMonth(ann, '2026-11'), await t.teamMonth(ts, '2026-11'), await t.teamMonth(ts, '2026-12'));
  seen.push(
    await t.teamDaily(ts, '2026-11-27', '2026-11-30'),
    await t.memberDaily(bob, '2026-11-01', '2026-12-31'),
    await t.teamDaily(other, '2026-11-01', '2026-12-31'),
  );
  const anon = await t.anonymousMember(ts, '(anonymous)', T0);
  seen.push(anon === (await t.anonymousMember(ts, '(anonymous)', T1)), await t.isSynthetic(anon), await t.isSynthetic(ann), await t.isSynthetic(999));
  await a.removeMember(bob, T1);
  await t.renameMember(bob, 'bob (removed #2)');
  seen.push(await t.people(ts), await t.seatCount(), await t.teamspaces(), await t.peopleCount(ts), await t.ownerCount(ts), await t.ownerCount(other));
  const g = await t.insertRule('global', ts, null, 'Prefer v2.', T0);
  await t.insertRule('library_own', null, '/o/r', 'Use the hook API.', T0);
  await t.insertRule('library_team', other, '/o/r', 'Not ours.', T0);
  const gone = await t.insertRule('library_team', ts, '/o/r', 'Gone soon.', T0);
  seen.push(await t.deleteRule(gone), await t.deleteRule(gone), await t.rule(g), await t.rule(gone), await t.rulesFor(ts), await t.rulesFor(other));
  // metering: each request judged (meter-rule.ts) against the counts before it, in one batch; a
  // refusal counts nothing, and the answer's throw comes back as that request's error
  await a.updateTeamspace(ts, { plan: 'free', included_requests: 2 });
  const payg = await a.createTeamspace('payg', 'payg', T0);
  await a.updateTeamspace(payg, { spending_limit_cents: 3, cents_per_extra_request: 1.5 });
  const metered = await t.countRequests(
    [
      ...[1, 2, 3].map(() => ({ memberId: 999, teamspaceId: ts })),
      ...[1, 2, 3].map(() => ({ memberId: 998, teamspaceId: payg })),
      { memberId: 997, teamspaceId: 999 },
    ],
    '2026-11-28',
    ({ verdict, used }) => {
      if (verdict === 'noTeamspace') throw new Error('no teamspace');
      return `${verdict} after ${used}`;
    },
  );
  seen.push(
    metered.map((m) => ('ok' in m ? m.ok : String(m.err))),
    await t.memberMonth(999, '2026-11'),
    await t.memberMonth(998, '2026-11'),
    await t.teamMonth(payg, '2026-11'),
  );
  return seen;
}

export function fail(): never {
  throw new Error('refused inside the transaction');
}

export const STORY_TABLES = [
  'teamspaces',
  'members',
  'api_keys',
  'users',
  'sessions',
  'setup_tokens',
  'invitations',
  'instance_settings',
  'audit_log',
  'research_usage',
  'rules',
  'usage_daily',
  'usage_member_monthly',
  'usage_teamspace_monthly',
];

export const STORIES = { accountsStory, usersStory, invitationsStory, settingsAndAuditStory, researchStory, teamsStory };
