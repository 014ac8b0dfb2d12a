import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runStacks, startTestServer } from './helpers/server.ts';
import { addLibrary, call } from './helpers/teams.ts';

test('CLI: members, policies, plan and rules change what a running server does', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  const cli = (...args: string[]) => runStacks([...args, '--data-dir', s.dataDir, '--dev']);
  try {
    addLibrary(s, { id: '/acme/verified', verified: true });
    addLibrary(s, { id: '/acme/unverified', verified: false });
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

    const bad = await cli('policies', 'set', '--mode', 'everything');
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
    const usage = await cli('usage', '--member', 'ada', '--days', '2');
    assert.equal(JSON.parse(usage.stdout).member.requests, 2);
  } finally {
    await s.close();
  }
});
