import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runStacks, startTestServer, type TestServer } from './helpers/server.ts';

/** A browser-like client: keeps the session cookie, sends the CSRF token when told to. */
function browser(s: TestServer) {
  let cookie = '';
  let csrf: string | null = null;
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { ...headers };
    if (cookie) h.cookie = cookie;
    if (body !== undefined) h['content-type'] = 'application/json';
    const r = await fetch(new URL(path, s.url), { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
    const set = r.headers.get('set-cookie');
    if (set) cookie = /stacks_session=([^;]*)/.exec(set)?.[1] ? `stacks_session=${/stacks_session=([^;]*)/.exec(set)![1]}` : cookie;
    const text = await r.text();
    const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    if (typeof json.csrfToken === 'string') csrf = json.csrfToken;
    return { status: r.status, body: json, setCookie: set, headers: r.headers };
  };
  return {
    send,
    /** A change with the session's CSRF token. */
    change: (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      send(method, path, body, { 'x-csrf-token': csrf ?? '', ...headers }),
    get cookie() {
      return cookie;
    },
  };
}

test('sign-in: the setup link makes the first owner once; sessions are HTTP-only cookies with CSRF; members make their own keys', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  assert.match(s.setupUrl ?? '', /\/#\/setup\/[A-Za-z0-9_-]{20,}$/);
  const token = s.setupUrl!.split('/#/setup/')[1]!;
  const owner = browser(s);
  assert.equal((await owner.send('POST', '/api/setup', { token: 'x'.repeat(32), username: 'olga', password: 'correct horse battery' })).status, 403);
  assert.equal((await owner.send('POST', '/api/setup', { token, username: 'olga', password: 'short' })).status, 400);
  const setup = await owner.send('POST', '/api/setup', { token, username: 'Olga', password: 'correct horse battery' });
  assert.equal(setup.status, 200, JSON.stringify(setup.body));
  assert.match(setup.setCookie ?? '', /stacks_session=s%3A.+; Max-Age=\d+; Path=\/; Expires=.+; HttpOnly; SameSite=Lax$/);
  assert.deepEqual(Object.keys(setup.body).sort(), ['csrfToken', 'expiresAt', 'user']);
  assert.deepEqual([(setup.body.user as { username: string }).username, (setup.body.user as { role: string }).role], ['olga', 'owner']);
  assert.equal((await browser(s).send('POST', '/api/setup', { token, username: 'eve', password: 'correct horse battery' })).status, 403, 'the link works once');

  // The session acts as its user; every change needs the CSRF token and this origin.
  assert.equal(((await owner.send('GET', '/api/session')).body.user as { username: string }).username, 'olga');
  assert.equal((await owner.send('POST', '/api/users', { username: 'ken', password: 'kens long password', role: 'member' })).status, 403);
  assert.equal(
    (await owner.change('POST', '/api/users', { username: 'ken', password: 'kens long password', role: 'member' }, { origin: 'http://evil.example' })).status,
    403,
  );
  assert.equal((await owner.change('POST', '/api/users', { username: 'ken', password: 'kens long password', role: 'member' })).status, 201);
  assert.equal((await owner.change('POST', '/api/users', { username: 'mia', password: 'mias long password', role: 'member' })).status, 201);
  assert.equal((await owner.send('GET', '/api/audit')).status, 200);

  // A member signs in and creates a key for itself, not for others.
  const ken = browser(s);
  const signedIn = await ken.send('POST', '/api/session', { username: 'ken', password: 'kens long password' });
  assert.equal(signedIn.status, 200);
  const key = await ken.change('POST', '/api/v2/keys', { name: 'ken laptop', scope: 'read' });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  assert.equal(key.body.memberName, 'ken');
  assert.equal((await s.api('/api/v2/context?libraryId=/no/such&query=x', { auth: key.body.key as string })).status, 404, 'the key works (and reads)');
  const olgaMember = (setup.body.user as { memberId: number }).memberId;
  assert.equal((await ken.change('POST', '/api/v2/keys', { name: 'as olga', memberId: olgaMember })).status, 403);
  assert.equal((await ken.send('GET', '/api/audit')).status, 403);

  // Wrong passwords are refused, then throttled; nothing tells a wrong name from a wrong password.
  const mallory = browser(s);
  const unknown = await mallory.send('POST', '/api/session', { username: 'nobody', password: 'whatever it is' });
  const wrong = await mallory.send('POST', '/api/session', { username: 'mia', password: 'not her password' });
  assert.deepEqual([unknown.status, unknown.body.message], [wrong.status, wrong.body.message]);
  for (let i = 0; i < 4; i++) assert.equal((await mallory.send('POST', '/api/session', { username: 'mia', password: 'not her password' })).status, 401);
  const throttled = await mallory.send('POST', '/api/session', { username: 'mia', password: 'mias long password' });
  assert.equal(throttled.status, 429);
  assert.ok(Number(throttled.headers.get('retry-after')) > 0);

  // The operator disables ken on the box: his session ends at once.
  const listed = await runStacks(['users', 'list', '--json', '--data-dir', s.dataDir]);
  assert.deepEqual(
    (JSON.parse(listed.stdout) as { username: string }[]).map((u) => u.username),
    ['olga', 'ken', 'mia'],
  );
  assert.equal((await runStacks(['users', 'disable', 'ken', '--data-dir', s.dataDir])).code, 0);
  assert.equal((await ken.send('GET', '/api/session')).body.user, null);
  assert.equal((await ken.send('POST', '/api/session', { username: 'ken', password: 'kens long password' })).status, 401);

  // Signing out ends the session; the audit log has the sign-ins and never a password.
  assert.equal((await owner.change('DELETE', '/api/session')).status, 204);
  assert.equal((await owner.send('GET', '/api/session')).body.user, null);
  const log = await s.api('/api/audit?action=signIn&limit=100');
  const entries = ((await log.json()) as { entries: { outcome: string; target: string | null }[] }).entries;
  assert.ok(entries.some((e) => e.outcome === 'ok' && e.target === 'ken') && entries.some((e) => e.outcome === 'refused' && e.target === 'mia'));
  const dump = JSON.stringify(s.services.store.db.prepare('SELECT * FROM audit_log').all());
  assert.ok(!dump.includes('kens long password') && !dump.includes('not her password') && !dump.includes(token));
});

test("sign-in: a new password ends the user's other sessions (API by the user, by an admin, and on the box); the changing session stays", async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const token = s.setupUrl!.split('/#/setup/')[1]!;
  const olga = browser(s);
  const setup = await olga.send('POST', '/api/setup', { token, username: 'olga', password: 'correct horse battery' });
  const olgaId = (setup.body.user as { id: number }).id;
  const kenId = ((await olga.change('POST', '/api/users', { username: 'ken', password: 'kens long password', role: 'member' })).body as { id: number }).id;
  const signIn = async (username: string, password: string) => {
    const b = browser(s);
    assert.equal((await b.send('POST', '/api/session', { username, password })).status, 200);
    return b;
  };
  const makesKey = async (b: ReturnType<typeof browser>) => (await b.change('POST', '/api/v2/keys', { name: `k${Math.random()}`, scope: 'read' })).status;

  // By the user itself: the session that changed it goes on, the user's other session ends.
  const olgaElsewhere = await signIn('olga', 'correct horse battery');
  assert.equal(await makesKey(olgaElsewhere), 201);
  assert.equal((await olga.change('PATCH', `/api/users/${olgaId}`, { password: 'a new horse battery' })).status, 200);
  assert.equal(await makesKey(olga), 201, 'the changing session still works');
  assert.equal(await makesKey(olgaElsewhere), 401, 'the old session (with its CSRF token) is refused');
  assert.equal((await olgaElsewhere.send('GET', '/api/session')).body.user, null);
  assert.equal((await browser(s).send('POST', '/api/session', { username: 'olga', password: 'correct horse battery' })).status, 401);

  // By an admin: every session of that user ends, the admin's goes on.
  const ken1 = await signIn('ken', 'kens long password');
  const ken2 = await signIn('ken', 'kens long password');
  assert.equal(await makesKey(ken1), 201);
  assert.equal((await olga.change('PATCH', `/api/users/${kenId}`, { password: 'kens second password' })).status, 200);
  assert.deepEqual([await makesKey(ken1), await makesKey(ken2), await makesKey(olga)], [401, 401, 201]);

  // On the box: `stacks users password` ends them all.
  const ken3 = await signIn('ken', 'kens second password');
  assert.equal(await makesKey(ken3), 201);
  const cli = await runStacks(['users', 'password', 'ken', '--password-stdin', '--data-dir', s.dataDir], {}, 'kens third password\n');
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(await makesKey(ken3), 401);
  assert.equal(await makesKey(olga), 201, 'other users keep their sessions');
  assert.equal(await makesKey(await signIn('ken', 'kens third password')), 201);
});
