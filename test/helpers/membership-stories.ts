// The stories of MembershipStore (changes of people spanning several rows) told to both backends by
// test/store-postgres-accounts.test.ts, with the other people-and-accounting stories (account-stories.ts).
import type { NewUser } from '../../server/store/membership.ts';
import { LATER, T0, T1, T2, type Stores } from './account-stories.ts';

/** What a call was refused with: its ApiError code, or 'ok'. */
export async function refusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

export const newKey = (name: string) => ({ name, prefix: `stk_${name}`, hash: `hash-${name}`, scope: 'all' as const });

/** A new user of teamspace `teamspaceId` (a member, no password, no seat limit) with `extra` changed. */
export const newUser = (teamspaceId: number, username: string, extra: Partial<NewUser> = {}): NewUser => ({
  teamspaceId,
  username,
  memberName: username,
  role: 'member',
  email: null,
  maxSeats: null,
  now: T1,
  passwordHash: null,
  sso: null,
  ...extra,
});

/** Seats, names, keys, invitations, setup links and the last owner. */
export async function membershipStory({ membership: ms, accounts: a, users: u, invitations: inv }: Stores): Promise<unknown[]> {
  const seen: unknown[] = [];
  const owner = { name: 'ann', role: 'owner' as const, email: null, maxSeats: 4, now: T0 };
  const acme = await ms.createTeamspace('acme', 'pro', owner, newKey('ann'));
  seen.push(acme, await refusal(() => ms.createTeamspace('acme', 'free', { ...owner, name: 'zed' }, newKey('zed'))));
  const ts = acme.teamspaceId;
  const member = (name: string, maxSeats: number | null, now = T0) => ({ teamspaceId: ts, name, role: 'member' as const, email: null, maxSeats, now });
  const bob = await ms.addMember(member('bob', 4), newKey('bob'));
  seen.push(bob, await refusal(() => ms.addMember(member('bob', null))));
  // a key for a new member name makes the member; for an existing one, keeps its role
  const ci = await ms.createKey({ ...newKey('ci'), teamspaceId: ts, memberName: 'ci', role: 'member', now: T0 });
  const bob2 = await ms.createKey({ ...newKey('bob2'), teamspaceId: ts, memberName: 'bob', role: 'admin', now: T0 });
  seen.push(ci.id, ci.member.name, bob2.member.id, bob2.member.role);
  // the fourth seat, taken with an invitation it uses up; then no seat is left
  const invitation = await inv.insert({
    teamspaceId: ts,
    role: 'member',
    username: 'cy',
    email: null,
    tokenHash: 'inv-1',
    invitedBy: 'ann',
    now: T0,
    expiresAt: LATER,
  });
  const cy = await ms.createUser(newUser(ts, 'cy', { maxSeats: 4, passwordHash: 'scrypt$1', invitationId: invitation }));
  seen.push(cy, (await inv.byId(invitation))?.user_id ?? null);
  seen.push(await refusal(() => ms.addMember(member('dan', 4, T1))), await refusal(() => ms.createUser(newUser(ts, 'cy'))));
  // a used invitation, an unknown setup link: no account; a valid setup link is used up
  seen.push(await refusal(() => ms.createUser(newUser(ts, 'dan', { invitationId: invitation }))), await u.byUsername('dan'));
  seen.push(await refusal(() => ms.createUser(newUser(ts, 'eve', { setupTokenHash: 'nope' }))));
  await u.insertSetupToken('setup-1', T0, LATER);
  const eve = await ms.createUser(newUser(ts, 'eve', { memberName: 'cy', role: 'admin', setupTokenHash: 'setup-1' }));
  seen.push((await u.byId(eve))?.member_name, await refusal(() => ms.createUser(newUser(ts, 'fay', { setupTokenHash: 'setup-1' }))));
  // the last owner can be neither demoted nor removed; with a second owner, the first can go (and its keys are revoked)
  seen.push(await refusal(() => ms.setRole(acme.memberId, 'admin')), await refusal(() => ms.removeMember(acme.memberId, T1)));
  await ms.setRole(bob.memberId, 'owner');
  await ms.removeMember(acme.memberId, T2);
  seen.push((await a.key(acme.keyId))?.revoked_at, (await a.member(acme.memberId))?.removed_at);
  // a removed member's name is free again (the old row renamed), and the renamed row takes no key
  const ann2 = await ms.addMember(member('ann', null, T2));
  const renamed = `ann (removed #${acme.memberId})`;
  seen.push((await a.member(acme.memberId))?.name, ann2.keyId);
  seen.push(await refusal(() => ms.createKey({ ...newKey('x'), teamspaceId: ts, memberName: renamed, role: 'member', now: T2 })));
  // (ids are compared only before the first refused insert: a rolled-back insert leaves a gap in PostgreSQL's sequences, not in SQLite's rowids)
  seen.push((await a.members(ts)).map((m) => `${m.name}:${m.role}`));
  return seen;
}

/** An SSO user: made at the first sign-in with a free user name, its role changed in place, moved to another teamspace. */
export async function ssoStory({ membership: ms, accounts: a, users: u }: Stores): Promise<unknown[]> {
  const acme = await ms.createTeamspace('acme', 'pro', { name: 'ann', role: 'owner', email: null, maxSeats: null, now: T0 }, newKey('ann'));
  const ts = acme.teamspaceId;
  const other = await a.createTeamspace('other', 'free', T0);
  await ms.createUser(newUser(ts, 'cy-smith'));
  const sso = { issuer: 'https://idp', subject: 'sub-1' };
  const first = await ms.provisionSsoUser({ ...newUser(ts, 'Cy Smith'), sso });
  const promoted = await ms.provisionSsoUser({ ...newUser(ts, 'ignored', { role: 'admin' }), sso });
  const moved = await ms.provisionSsoUser({ ...newUser(other, 'ignored', { now: T2 }), sso });
  return [
    [first.username, first.member_name, first.role, first.teamspace_id === ts],
    [promoted.id === first.id, promoted.member_id === first.member_id, promoted.role],
    [moved.id === first.id, moved.teamspace_id === other, moved.member_name, moved.role],
    (await a.member(first.member_id))?.removed_at,
    (await u.list()).map((x) => `${x.username}:${x.member_name}@${x.teamspace}:${x.role}`),
  ];
}
