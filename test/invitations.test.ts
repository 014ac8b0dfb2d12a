import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devLicense, runStacks, startTestServer, type TestServer } from './helpers/server.ts';
import { loadCorpusBundles } from './helpers/mcp.ts';

/**
 * Invitations, the public address and the first-run checklist over the real HTTP API (issue 42):
 * who may invite whom, a link that works once and expires, the public address in the links.
 */

const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function post(s: TestServer, path: string, body: unknown, auth?: string | null) {
  const r = await s.api(path, { ...json(body), auth });
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, cookie: r.headers.get('set-cookie') };
}

async function keyOf(s: TestServer, name: string, role: string, scope?: string): Promise<string> {
  const m = await post(s, '/api/v2/members', { name, role });
  assert.equal(m.status, 201, JSON.stringify(m.body));
  if (!scope) return (m.body.key as { key: string }).key;
  const k = await post(s, '/api/v2/keys', { name: `${name} read`, memberId: (m.body.member as { id: number }).id, scope });
  return k.body.key as string;
}

test('invitations: an admin invites, the link makes an account once and signs in; spent, revoked and expired links are refused', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const created = await post(s, '/api/invitations', { role: 'member', email: 'ann@example.com' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const token = created.body.token as string;
  assert.match(created.body.path as string, /^\/#\/invite\/[A-Za-z0-9_-]{30,}$/);
  assert.equal(created.body.url, null, 'no public address set: the caller puts its own origin in front');
  // Hashed at rest: the token itself is nowhere in the database.
  const rows = s.services.store.db.prepare('SELECT * FROM invitations').all();
  assert.ok(!JSON.stringify(rows).includes(token));

  const preview = await post(s, '/api/invitations/preview', { token }, null);
  assert.deepEqual([preview.status, preview.body.teamspace, preview.body.role, preview.body.username], [200, 'default', 'member', null]);
  assert.equal((await post(s, '/api/invitations/accept', { token, password: 'anns long password' }, null)).status, 400, 'no user name given and none fixed');
  const accepted = await post(s, '/api/invitations/accept', { token, username: 'ann', password: 'anns long password' }, null);
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const cookie = /stacks_session=[^;]+/.exec(accepted.cookie ?? '')?.[0];
  assert.ok(cookie, 'signed in with the session cookie');
  const session = (await (await s.api('/api/session', { auth: null, headers: { cookie } })).json()) as {
    user: { username: string; role: string; teamspace: string };
  };
  assert.deepEqual([session.user.username, session.user.role, session.user.teamspace], ['ann', 'member', 'default']);
  // The link works once.
  const again = await post(s, '/api/invitations/accept', { token, username: 'ann2', password: 'anns long password' }, null);
  assert.equal(again.status, 403);
  assert.match(again.body.message as string, /already used/);
  assert.equal((await post(s, '/api/invitations/preview', { token }, null)).status, 403);

  // Expired: refused with the date; revoked: refused.
  const late = await post(s, '/api/invitations', { role: 'member', username: 'lee', days: 1 });
  s.services.store.db.prepare('UPDATE invitations SET expires_at = ? WHERE id = ?').run(new Date(Date.now() - 1000).toISOString(), late.body.id);
  const expired = await post(s, '/api/invitations/accept', { token: late.body.token, password: 'lees long password' }, null);
  assert.equal(expired.status, 403);
  assert.match(expired.body.message as string, /expired on \d{4}-\d\d-\d\d/);
  const gone = await post(s, '/api/invitations', { role: 'admin' });
  assert.equal((await s.api(`/api/invitations/${gone.body.id}`, { method: 'DELETE' })).status, 200);
  assert.match(
    (await post(s, '/api/invitations/accept', { token: gone.body.token, username: 'gus', password: 'guss long password' }, null)).body.message as string,
    /revoked/,
  );

  const list = (await (await s.api('/api/invitations')).json()) as { invitations: { state: string; token?: string }[] };
  assert.deepEqual(
    list.invitations.map((i) => i.state),
    ['revoked', 'expired', 'used'],
  );
  assert.ok(
    list.invitations.every((i) => i.token === undefined),
    'a list never shows links',
  );
  const audit = (await (await s.api('/api/audit?limit=50')).json()) as { entries: { action: string; outcome: string }[] };
  const seen = audit.entries.map((e) => `${e.action}:${e.outcome}`);
  for (const e of ['invitationCreate:ok', 'invitationAccept:ok', 'invitationAccept:refused', 'invitationRevoke:ok'])
    assert.ok(seen.includes(e), `${e} in ${seen.join(', ')}`);
  assert.ok(!JSON.stringify(audit).includes(token), 'no token in the audit log');
});

test('invitations: least privilege: members and read keys cannot invite, admins cannot invite owners, a fixed user name must be free', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const member = await keyOf(s, 'mo', 'member');
  const admin = await keyOf(s, 'ada', 'admin');
  const reader = await keyOf(s, 'rea', 'admin', 'read');
  assert.equal((await post(s, '/api/invitations', { role: 'member' }, member)).status, 403);
  assert.equal((await s.api('/api/invitations', { auth: member })).status, 403);
  assert.equal((await post(s, '/api/invitations', { role: 'member' }, reader)).status, 403);
  assert.equal((await post(s, '/api/invitations', { role: 'owner' }, admin)).status, 403);
  assert.equal((await post(s, '/api/invitations', { role: 'admin' }, admin)).status, 201);
  assert.equal((await post(s, '/api/invitations', { role: 'member' }, null)).status, 401);
  await post(s, '/api/users', { username: 'taken', password: 'a long password here', role: 'member' });
  assert.equal((await post(s, '/api/invitations', { username: 'taken' })).status, 409);
});

test('public address: STACKS_PUBLIC_URL wins; else the console setting (the instance owner only) makes the links', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const patch = (body: unknown, auth?: string) =>
    s.api('/api/settings', { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), auth });
  assert.deepEqual(await (await s.api('/api/settings', { auth: null })).json(), { publicUrl: null, source: null, consoleValue: null });
  assert.equal((await patch({ publicUrl: 'ftp://stacks.example.com' })).status, 400);
  assert.equal((await patch({ publicUrl: 'https://stacks.example.com/' })).status, 200);
  assert.equal((await post(s, '/api/invitations', {})).body.url?.toString().startsWith('https://stacks.example.com/#/invite/'), true);
  const admin = await keyOf(s, 'ada', 'admin');
  assert.equal((await patch({ publicUrl: 'https://evil.example' }, admin)).status, 403);

  const env = await startTestServer({ config: { publicUrl: 'http://stacks.test:8080' } });
  t.after(() => env.close());
  assert.match(env.setupUrl ?? '', /^http:\/\/stacks\.test:8080\/#\/setup\//);
  await env.api('/api/settings', {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ publicUrl: 'https://other.example' }),
  });
  assert.deepEqual(await (await env.api('/api/settings')).json(), {
    publicUrl: 'http://stacks.test:8080',
    source: 'env',
    consoleValue: 'https://other.example',
  });
});

test('getting started: computed from what exists (the first-start key and the own docs do not count)', async (t) => {
  const s = await startTestServer({ license: false });
  t.after(() => s.close());
  const state = async () => (await (await s.api('/api/getting-started')).json()) as { done: boolean; items: { id: string; done: boolean }[] };
  const done = async () => Object.fromEntries((await state()).items.map((i) => [i.id, i.done]));
  assert.deepEqual(await done(), { license: false, library: false, key: false, invite: false });
  assert.equal((await post(s, '/api/license', { license: devLicense() })).status, 200);
  await post(s, '/api/v2/keys', { name: 'assistant', scope: 'read' });
  await post(s, '/api/invitations', {});
  assert.deepEqual(await done(), { license: true, library: false, key: true, invite: true });
  await loadCorpusBundles(s.services, ['pino']);
  assert.equal((await state()).done, true);
});

test('stacks users invite prints a one-time link on the public address; it makes a console account once', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  // Without an address the CLI prints the path and says how to get the whole link.
  const bare = await runStacks(['users', 'invite', '--data-dir', s.dataDir, '--dev']);
  assert.equal(bare.code, 0, bare.stderr);
  assert.match(bare.stdout, /^\/#\/invite\/\S+ {2}\(open it on this instance's address; set STACKS_PUBLIC_URL/m);
  const r = await runStacks(['users', 'invite', '--data-dir', s.dataDir, '--dev', '--role', 'admin', '--username', 'cli-ann', '--days', '2'], {
    STACKS_PUBLIC_URL: 'https://stacks.example.com',
  });
  assert.equal(r.code, 0, r.stderr);
  const link = /https:\/\/stacks\.example\.com\/#\/invite\/([A-Za-z0-9_-]{30,})/.exec(r.stdout);
  assert.ok(link, r.stdout);
  assert.match(r.stdout, /admin in default, works once until/);
  const accepted = await post(s, '/api/invitations/accept', { token: link[1], password: 'anns long password' }, null);
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  assert.equal((accepted.body.user as { username: string; role: string }).username, 'cli-ann');
  const again = await post(s, '/api/invitations/accept', { token: link[1], password: 'anns long password' }, null);
  assert.equal(again.status, 403);
  assert.match(again.body.message as string, /already used/);
});
