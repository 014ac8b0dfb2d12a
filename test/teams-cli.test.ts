import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { devLicense, runStacks, startTestServer, tempDir } from './helpers/server.ts';
import { addLibrary, call } from './helpers/teams.ts';
import { runCli } from './helpers/cli.ts';

test('CLI: members, policies, plan and rules change what a running server does', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  // A change the running server must see is made by another process; reads and refusals run in this one.
  const cli = (...args: string[]) => runStacks([...args, '--data-dir', s.dataDir, '--dev']);
  const local = (...args: string[]) => runCli([...args, '--data-dir', s.dataDir, '--dev']);
  try {
    await addLibrary(s, { id: '/acme/verified', verified: true });
    await addLibrary(s, { id: '/acme/unverified', verified: false });
    assert.equal((await call<{ accessibleLibraryCount: number }>(s, 'GET', '/api/v2/policies')).body.accessibleLibraryCount, 2);

    const added = await cli('members', 'add', 'ada', '--role', 'admin');
    assert.equal(added.code, 0, added.stderr);
    const key = /stk_\S+/.exec(added.stdout)?.[0];
    assert.ok(key, added.stdout);
    const me = await call<{ member: { name: string; role: string } }>(s, 'GET', '/api/v2/usage', undefined, key);
    assert.equal(me.status, 200);
    assert.deepEqual([me.body.member.name, me.body.member.role], ['ada', 'admin']);

    const set = await cli('policies', 'set', '--require-verified', 'true', '--disable', 'websites');
    assert.equal(set.code, 0, set.stderr);
    assert.equal(JSON.parse(set.stdout).accessibleLibraryCount, 1);
    const seen = await call<{ accessibleLibraryCount: number; sourceTypes: { websites: { enabled: boolean } } }>(s, 'GET', '/api/v2/policies', undefined, key);
    assert.equal(seen.body.accessibleLibraryCount, 1, 'the running server sees the change made by another process');
    assert.equal(seen.body.sourceTypes.websites.enabled, false);
    assert.equal(s.services.access.canSee(null, s.services.store.libraries.get('/acme/unverified')!), false);

    const bad = await local('policies', 'set', '--mode', 'everything');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /libraryFilters\.mode/);

    const plan = await cli('plan', 'set', '--plan', 'free', '--included', '2');
    assert.equal(plan.code, 0, plan.stderr);
    const h1 = await s.api('/api/v3/search?query=x', { auth: key });
    assert.equal(h1.headers.get('ratelimit-limit'), '2');
    await s.api('/api/v3/search?query=x', { auth: key });
    assert.equal((await s.api('/api/v3/search?query=x', { auth: key })).status, 429);

    const rule = await cli('rules', 'add', 'Prefer the async API.', '--kind', 'libraryTeam', '--library', '/acme/verified');
    assert.equal(rule.code, 0, rule.stderr);
    assert.deepEqual(s.services.access.rules(null, ['/acme/verified']).libraries[0]!.libraryTeam, ['Prefer the async API.']);
    const usage = await local('usage', '--member', 'ada', '--days', '2');
    assert.equal(JSON.parse(usage.stdout).member.requests, 2);
  } finally {
    await s.close();
  }
});

test('CLI: a second teamspace gets its own owner, members and policy; bad requests leave nothing behind', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  // A change the running server must see is made by another process; reads and refusals run in this one.
  const cli = (...args: string[]) => runStacks([...args, '--data-dir', s.dataDir, '--dev']);
  const local = (...args: string[]) => runCli([...args, '--data-dir', s.dataDir, '--dev']);
  type Space = { name: string; plan: string; members: number; isDefault: boolean };
  const spaces = async () => JSON.parse((await local('teamspaces', 'list', '--json')).stdout) as Space[];
  try {
    await addLibrary(s, { id: '/acme/verified', verified: true });
    await addLibrary(s, { id: '/acme/unverified', verified: false });

    const created = await cli('teamspaces', 'create', 'research', '--owner', 'grace', '--plan', 'pro');
    assert.equal(created.code, 0, created.stderr);
    const key = /stk_\S+/.exec(created.stdout)?.[0];
    assert.ok(key, created.stdout);
    const list = await spaces();
    assert.deepEqual(
      list.map((t) => [t.name, t.isDefault]),
      [
        ['default', true],
        ['research', false],
      ],
    );
    assert.deepEqual([list[1]!.plan, list[1]!.members], ['pro', 1]);

    // The owner's key works against the running server, in its own teamspace only.
    const members = await call<{ members: { name: string; role: string }[] }>(s, 'GET', '/api/v2/members', undefined, key);
    assert.equal(members.status, 200);
    assert.deepEqual(
      members.body.members.map((m) => [m.name, m.role]),
      [['grace', 'owner']],
    );
    const policy = await cli('policies', 'set', '--teamspace', 'research', '--require-verified', 'true');
    assert.equal(policy.code, 0, policy.stderr);
    assert.equal((await call<{ accessibleLibraryCount: number }>(s, 'GET', '/api/v2/policies', undefined, key)).body.accessibleLibraryCount, 1);
    assert.equal(
      (await call<{ accessibleLibraryCount: number }>(s, 'GET', '/api/v2/policies')).body.accessibleLibraryCount,
      2,
      'the default teamspace keeps its policy',
    );
    const invited = await call(s, 'POST', '/api/v2/members', { name: 'linus', role: 'member' }, key);
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    assert.equal((await local('members', 'list', '--teamspace', 'research', '--json')).stdout.includes('linus'), true);
    const botKey = await local('keys', 'create', '--name', 'ci', '--member', 'ci-bot', '--teamspace', 'research');
    assert.equal(botKey.code, 0, botKey.stderr);
    const researchKeys = JSON.parse((await local('keys', 'list', '--teamspace', 'research', '--json')).stdout) as { memberName: string }[];
    assert.deepEqual(researchKeys.map((k) => k.memberName).sort(), ['ci-bot', 'grace', 'linus']);

    for (const [args, message] of [
      [['research', '--owner', 'someone'], /already exists/],
      [['Research Team', '--owner', 'x'], /name: 1-64 lower-case/],
      [['docs', '--owner', 'x', '--plan', 'gold'], /plan: one of/],
      [['docs', '--owner', '!bad'], /name: 1-100/],
    ] as const) {
      const bad = await local('teamspaces', 'create', ...args);
      assert.notEqual(bad.code, 0, args.join(' '));
      assert.match(bad.stderr, message);
    }
    assert.deepEqual(
      (await spaces()).map((t) => t.name),
      ['default', 'research'],
      'a refused owner leaves no teamspace behind',
    );
    assert.notEqual((await local('members', 'list', '--teamspace', 'nope')).code, 0);
  } finally {
    await s.close();
  }
});

test('CLI: license seats count the members of every teamspace', async () => {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense({ maxMembers: 2 }));
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir, '--dev']);
  assert.equal((await cli('members', 'add', 'alice', '--role', 'owner')).code, 0);
  const second = await cli('teamspaces', 'create', 'research', '--owner', 'grace');
  assert.equal(second.code, 0, second.stderr);
  const third = await cli('teamspaces', 'create', 'ops', '--owner', 'hal');
  assert.notEqual(third.code, 0);
  assert.match(third.stderr, /allows 2 members/);
  const more = await cli('members', 'add', 'bob', '--teamspace', 'research');
  assert.match(more.stderr, /allows 2 members/);
  assert.deepEqual(
    (JSON.parse((await cli('teamspaces', 'list', '--json')).stdout) as { name: string }[]).map((t) => t.name),
    ['default', 'research'],
  );
});
