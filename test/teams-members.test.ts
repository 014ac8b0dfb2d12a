import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers/server.ts';
import { addLibrary, call, startWithMaxMembers } from './helpers/teams.ts';

// Members of a teamspace and their roles over the API: who may write rules, invitations, roles,
// owner protection, the plan's member limit and the keys API. The teamspace's policies and library
// filters are in teams.test.ts.

test('rules and role checks for rules', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    const admin = (await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'ada', role: 'admin' })).body.key.key;
    const member = (await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'bob' })).body.key.key;
    assert.equal((await call(s, 'POST', '/api/v2/rules', { kind: 'global', text: 'by admin' }, admin)).status, 201);
    const denied = await call(s, 'POST', '/api/v2/rules', { kind: 'global', text: 'by member' }, member);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error, 'forbidden');
    const list = await call<{ rules: { id: number; text: string }[] }>(s, 'GET', '/api/v2/rules', undefined, member);
    assert.deepEqual(
      list.body.rules.map((r) => r.text),
      ['by admin'],
    );
    assert.equal((await call(s, 'DELETE', `/api/v2/rules/${list.body.rules[0]!.id}`, undefined, member)).status, 403);
    // A library owned by another teamspace: this teamspace may add team rules but not owner rules.
    const other = await s.services.store.accounts.createTeamspace('vendor', 'pro', new Date().toISOString());
    await addLibrary(s, { id: '/vendor/sdk', teamspaceId: other });
    assert.equal((await call(s, 'POST', '/api/v2/rules', { kind: 'libraryOwn', libraryId: '/vendor/sdk', text: 'x' }, admin)).status, 403);
  } finally {
    await s.close();
  }
});

test('members: invite, roles, owner protection, maxMembers, keys API', async () => {
  const s = await startWithMaxMembers(3);
  try {
    const list0 = await call<{ members: { name: string; role: string }[]; maxMembers: number }>(s, 'GET', '/api/v2/members');
    assert.deepEqual(
      list0.body.members.map((m) => [m.name, m.role]),
      [['admin', 'owner']],
    );
    assert.equal(list0.body.maxMembers, 3);
    const ada = await call<{ member: { id: number }; key: { key: string } }>(s, 'POST', '/api/v2/members', {
      name: 'ada',
      role: 'admin',
      email: 'ada@example.com',
    });
    assert.equal(ada.status, 201);
    const adaKey = ada.body.key.key;
    assert.equal((await call(s, 'GET', '/api/v2/usage', undefined, adaKey)).status, 200, 'the invited member can use its key');
    assert.equal((await call(s, 'POST', '/api/v2/members', { name: 'eve', role: 'owner' }, adaKey)).status, 403, 'admins cannot add owners');
    const bob = await call<{ member: { id: number }; key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'bob' }, adaKey);
    assert.equal(bob.status, 201);
    assert.equal((await call(s, 'POST', '/api/v2/members', { name: 'bob' })).status, 409, 'names are unique');
    const full = await call(s, 'POST', '/api/v2/members', { name: 'carl' });
    assert.equal(full.status, 403);
    assert.equal(full.body.error, 'member_limit_reached');
    const bobKey = bob.body.key.key;
    assert.equal((await call(s, 'POST', '/api/v2/members', { name: 'dan' }, bobKey)).status, 403, 'members cannot invite');
    assert.equal((await call(s, 'PATCH', `/api/v2/members/${bob.body.member.id}`, { role: 'admin' }, bobKey)).status, 403);

    // Owner protection.
    const owner = list0.body.members[0]!;
    const ownerId = (await call<{ members: { id: number; name: string }[] }>(s, 'GET', '/api/v2/members')).body.members.find((m) => m.name === owner.name)!.id;
    assert.equal((await call(s, 'DELETE', `/api/v2/members/${ownerId}`, undefined, adaKey)).status, 403, 'admins cannot remove owners');
    assert.equal((await call(s, 'DELETE', `/api/v2/members/${ownerId}`)).status, 409, 'the last owner stays');
    assert.equal((await call(s, 'PATCH', `/api/v2/members/${ownerId}`, { role: 'member' })).status, 409);
    assert.equal((await call(s, 'PATCH', `/api/v2/members/${ada.body.member.id}`, { role: 'owner' }, adaKey)).status, 403, 'admins cannot grant owner');
    const promoted = await call<{ role: string }>(s, 'PATCH', `/api/v2/members/${bob.body.member.id}`, { role: 'admin' });
    assert.equal(promoted.body.role, 'admin');
    assert.equal((await call(s, 'PATCH', '/api/v2/policies', {}, bobKey)).status, 200, 'the new role applies at once');

    // Removing a member revokes its keys and frees a seat.
    assert.equal((await call(s, 'DELETE', `/api/v2/members/${bob.body.member.id}`, undefined, adaKey)).status, 204);
    assert.equal((await call(s, 'GET', '/api/v2/usage', undefined, bobKey)).status, 401);
    assert.equal((await call(s, 'POST', '/api/v2/members', { name: 'carl', createKey: false })).status, 201);
    const again = await call(s, 'POST', '/api/v2/members', { name: 'bob' });
    assert.equal(again.status, 403, 'the seat is taken by carl');

    // Keys API.
    const k = await call<{ id: number; key: string }>(s, 'POST', '/api/v2/keys', { name: 'ci', memberId: ada.body.member.id });
    assert.equal(k.status, 201);
    assert.match(k.body.key, /^stk_/);
    const adaKeys = await call<{ keys: { id: number; name: string }[] }>(s, 'GET', '/api/v2/keys', undefined, adaKey);
    assert.ok(adaKeys.body.keys.some((x) => x.id === k.body.id));
    assert.equal((await call(s, 'DELETE', `/api/v2/keys/${k.body.id}`, undefined, adaKey)).status, 204);
    assert.equal((await call(s, 'GET', '/api/v2/usage', undefined, k.body.key)).status, 401, 'a revoked key is refused');
    assert.equal((await call(s, 'DELETE', '/api/v2/keys/99999')).status, 404);
    // A key acts as its member: an admin may not mint or revoke an owner's keys.
    assert.equal((await call(s, 'POST', '/api/v2/keys', { name: 'as owner', memberId: ownerId }, adaKey)).status, 403);
    const ownerKeys = await call<{ keys: { id: number; memberId: number }[] }>(s, 'GET', '/api/v2/keys');
    const ownerKeyId = ownerKeys.body.keys.find((x) => x.memberId === ownerId)!.id;
    assert.equal((await call(s, 'DELETE', `/api/v2/keys/${ownerKeyId}`, undefined, adaKey)).status, 403);
    const carlId = (await call<{ members: { id: number; name: string }[] }>(s, 'GET', '/api/v2/members')).body.members.find((m) => m.name === 'carl')!.id;
    const carlKey = (await call<{ key: string }>(s, 'POST', '/api/v2/keys', { name: 'carl key', memberId: carlId })).body.key;
    const memberKeys = await call<{ keys: { memberId: number }[] }>(s, 'GET', '/api/v2/keys', undefined, carlKey);
    assert.deepEqual(
      memberKeys.body.keys.map((x) => x.memberId),
      [carlId],
      'a member lists only its own keys',
    );
  } finally {
    await s.close();
  }
});
