import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import fs from 'node:fs';
import path from 'node:path';
import { openSqlite } from '../lib/sqlite.ts';
import { startTestServer, devLicense, tempDir, type TestServer } from './helpers/server.ts';
import { migrations } from '../server/store/migrations/index.ts';
import { createLogger } from '../server/log.ts';
import { scrubSecrets } from '../lib/redact.ts';

// No secret in any log at any level, nor in the audit log: the server runs at debug level with its
// log read here, secrets are sent every way a client can send them (URL path, query string,
// headers, JSON bodies of refused requests), and neither the log nor the audit log (API and table)
// holds one afterwards, while the context around them (paths, actions, names, hosts) is still there.

/** Fixed strings of each secret's shape (not random: a test of shapes must not depend on a draw). */
const PEM =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDk9xYtLwjH2sJ0yK1qg8bQm5z0C3b9aXq7pYt3w1f5uQAAAJg7Z2x9\n-----END OPENSSH PRIVATE KEY-----';
const GH_TOKEN = 'ghp_R8x2Lq9ZkT4mWv7Nc3Yb6Hd1Jf5Gs0Pa2Ue8';
const REPO_PASSWORD = 'Tr0ub4dor-and-3';
const USER_PASSWORD = 'correct horse battery staple 42';
const CSRF = 'Qm9yZWFzLTE3Ly9zdGFja3MtY3NyZi10b2tlbg';
const SESSION = 's:Zk3Q8Wm2Xr5Tn7Vb1Yc4Hd6Jf9Ls0Pa2Ue8Ki3Og7.c2lnbmF0dXJlLW9mLXRoZS1jb29raWUtZm9yLXRlc3Rz';
const WRONG_KEY = 'stk_Wr0ngKeyWr0ngKeyWr0ngKeyWr0ngKeyWr0ngKey1';
const REPO_URL = `https://alice:${REPO_PASSWORD}@git.example.com/acme/ledger.git`;

function capture(): { stream: Writable; text: () => string } {
  let out = '';
  return {
    stream: new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString('utf8');
        done();
      },
    }),
    text: () => out,
  };
}

async function send(
  s: TestServer,
  method: string,
  url: string,
  o: { body?: unknown; auth?: string | null; headers?: Record<string, string> } = {},
): Promise<number> {
  const headers: Record<string, string> = { ...(o.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers };
  const r = await s.api(url, { method, auth: o.auth, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  await r.arrayBuffer();
  return r.status;
}

interface Entry {
  action: string;
  outcome: string;
  target: string | null;
  actor: { name?: string };
  detail: Record<string, unknown> | null;
}

/** Secrets sent every way a client can send them: in a URL path and query strings, in headers, in JSON bodies of refused and failed requests. */
async function sendEveryWay(s: TestServer, member: string, forged: unknown): Promise<void> {
  // In a URL path (a key pasted where a library ID goes), and in query strings.
  assert.equal(await send(s, 'GET', `/api/v2/keys/${s.key}`), 404);
  assert.equal(await send(s, 'GET', `/${member}`, { auth: null }), 404);
  assert.equal(await send(s, 'GET', `/api/v3/search?query=hooks&key=${encodeURIComponent(member)}&access_token=${GH_TOKEN}`), 404);
  // In headers: a wrong key, a Git token as a bearer, a session cookie and CSRF token that match nothing.
  assert.equal(await send(s, 'GET', '/api/jobs', { auth: null, headers: { 'x-api-key': WRONG_KEY } }), 401);
  assert.equal(await send(s, 'GET', '/api/jobs', { auth: GH_TOKEN }), 401);
  assert.equal(
    await send(s, 'POST', '/api/v2/keys', {
      auth: null,
      body: { name: 'x' },
      headers: { cookie: `stacks_session=${encodeURIComponent(SESSION)}`, 'x-csrf-token': CSRF },
    }),
    401,
  );

  // In JSON bodies of refused and failed requests.
  assert.equal(await send(s, 'POST', '/api/license', { body: forged }), 400, 'the license file posted as the body');
  assert.equal(await send(s, 'POST', '/api/license', { body: { license: JSON.stringify(forged), note: JSON.stringify(forged) } }), 400, 'a forged license');
  assert.equal(await send(s, 'POST', '/api/users', { auth: member, body: { username: 'dana', password: USER_PASSWORD, role: 'member' } }), 403);
  assert.equal(await send(s, 'POST', '/api/users', { body: { username: 'erin', pwd: USER_PASSWORD, hint: `password=${USER_PASSWORD}` } }), 400);
  assert.equal(await send(s, 'POST', '/api/session', { auth: null, body: { username: member, password: USER_PASSWORD } }), 401, 'a key pasted as a user name');
  assert.equal(await send(s, 'POST', '/api/git-hosts', { auth: member, body: { host: 'git.example.com', kind: 'ssh', secret: PEM } }), 403);
  assert.equal(
    await send(s, 'POST', '/api/git-hosts', { body: { host: 'git.example.com', kind: 'token', secret: GH_TOKEN, comment: PEM } }),
    400,
    'an unknown field holding a key',
  );
  assert.equal(await send(s, 'POST', '/api/parse', { body: { repoUrl: REPO_URL, force: 'maybe' } }), 400);
  assert.equal(await send(s, 'POST', '/api/parse', { body: { repoUrl: `https://${GH_TOKEN}@git.example.com/acme/ledger.git`, force: 'maybe' } }), 400);
}

/** The context around the secrets is still in the log and the audit log: paths, actions, names, hosts. */
function contextIsKept(text: string, entries: Entry[]): void {
  assert.match(text, /"path":"\/api\/v2\/keys\/stk_\[redacted\]","status":404/);
  assert.match(text, /git clone https:\/\/alice:\[redacted\]@git\.example\.com\/acme\/ledger\.git failed/);
  assert.match(text, /"token":"\[redacted\]"/);
  const license = entries.filter((e) => e.action === 'licenseInstall');
  assert.equal(license.length, 2);
  assert.ok(license.every((e) => e.outcome === 'failed'));
  assert.equal((license.find((e) => e.detail?.payload)?.detail?.payload as Record<string, unknown>).edition, 'enterprise', 'the payload (no secret) is kept');
  assert.match(String(license.find((e) => e.detail?.note)?.detail?.note), /"signature":"\[redacted\]"/);
  const users = entries.filter((e) => e.action === 'userCreate');
  assert.deepEqual(users.map((e) => e.detail?.username).sort(), ['dana', 'erin']);
  assert.equal(entries.find((e) => e.action === 'signIn')?.target, 'stk_[redacted]');
  assert.equal(entries.find((e) => e.action === 'gitHostAdd' && e.outcome === 'failed')?.detail?.comment, '[redacted private key]');
  const repos = entries
    .filter((e) => e.action === 'parseRepo')
    .map((e) => e.target)
    .sort();
  assert.deepEqual(repos, ['https://[redacted]@git.example.com/acme/ledger.git', 'https://alice:[redacted]@git.example.com/acme/ledger.git']);
  assert.ok(
    entries.some((e) => e.action === 'authRefused'),
    'refused keys are recorded (without the key)',
  );
}

test('no secret reaches the log (debug level) or the audit log, whichever way it is sent', async () => {
  const log = capture();
  const s = await startTestServer({ config: { logLevel: 'debug' }, log: createLogger('debug', log.stream) });
  try {
    const member = (await s.services.keys.create({ name: 'mia', memberName: 'mia', role: 'member' })).key;
    const badLicense = JSON.parse(devLicense()) as { payload: Record<string, unknown>; signature: string };
    const signature = `${badLicense.signature.slice(0, -8)}AAAAAAA=`;
    const forged = { payload: { ...badLicense.payload, licensee: 'Forged Co' }, signature };
    // Also the first characters of the signature: a secret cut short by the audit's clipping must not leave its head.
    const secrets = [
      s.key,
      member,
      WRONG_KEY,
      GH_TOKEN,
      REPO_PASSWORD,
      USER_PASSWORD,
      CSRF,
      SESSION,
      signature,
      signature.slice(0, 12),
      badLicense.signature,
      'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUA',
    ];

    await sendEveryWay(s, member, forged);

    // The logger itself, with what code logs: errors, nested objects, child bindings, interpolation.
    s.services.log.error(
      { err: new Error(`git clone ${REPO_URL} failed`), req: { headers: { authorization: `Bearer ${s.key}`, cookie: `stacks_session=${SESSION}` } } },
      'clone failed',
    );
    s.services.log.child({ token: GH_TOKEN }).warn('credentials %s for %s', `${'Basic'} ${Buffer.from(`alice:${REPO_PASSWORD}`).toString('base64')}`, REPO_URL);
    s.services.log.debug(`license ${JSON.stringify(forged)} ${PEM}`);

    const entries = await auditEntries(s);
    const table = JSON.stringify(s.services.store.db.prepare('SELECT * FROM audit_log').all());
    await new Promise((r) => setTimeout(r, 50));
    const text = log.text();
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `the log holds ${secret.slice(0, 12)}...`);
      assert.ok(!text.includes(encodeURIComponent(secret)), `the log holds ${secret.slice(0, 12)}... (URL-encoded)`);
      assert.ok(!table.includes(secret), `the audit table holds ${secret.slice(0, 12)}...`);
      assert.ok(!JSON.stringify(entries).includes(secret), `GET /api/audit shows ${secret.slice(0, 12)}...`);
    }
    assert.ok(!text.includes(REPO_PASSWORD) && !text.includes('BEGIN OPENSSH'), 'no password, no key block');

    contextIsKept(text, entries);
  } finally {
    await s.close();
  }
});

test('secrets written into the audit table before it redacted them are not shown', async () => {
  const s = await startTestServer();
  try {
    await s.services.store.audit.append({
      at: new Date().toISOString(),
      actor_kind: 'anonymous',
      actor_key_id: null,
      actor_name: null,
      teamspace_id: null,
      action: 'licenseInstall',
      target: `https://bob:${REPO_PASSWORD}@git.example.com/x.git`,
      source_ip: '127.0.0.1',
      outcome: 'failed',
      detail: JSON.stringify({ signature: 'c2lnbmF0dXJl', key: s.key }),
    });
    const shown = JSON.stringify(await auditEntries(s));
    assert.ok(!shown.includes(REPO_PASSWORD) && !shown.includes(s.key) && !shown.includes('c2lnbmF0dXJl'), shown);
    assert.match(shown, /bob:\[redacted\]@git\.example\.com/);
  } finally {
    await s.close();
  }
});

test('migration 020 rewrites audit rows stored before redaction: the database file no longer holds their secrets', async () => {
  const dir = tempDir();
  const db = openSqlite(path.join(dir, 'stacks.db'));
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of migrations.filter((x) => x.version < 20)) {
    m.up(db);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
  const key = `stk_${'A1b2C3d4'.repeat(4)}`;
  db.prepare(
    "INSERT INTO audit_log (at, last_at, actor_kind, actor_name, action, target, outcome, detail) VALUES ('2026-01-01', '2026-01-01', 'anonymous', ?, 'sessionCreate', ?, 'refused', ?)",
  ).run(key, `https://bob:${REPO_PASSWORD}@git.example.com/x.git`, JSON.stringify({ password: 'hunter2hunter2', note: 'kept' }));
  db.close();
  const s = await startTestServer({ dataDir: dir });
  await s.close();
  const raw = fs.readFileSync(path.join(dir, 'stacks.db'));
  for (const secret of [key, REPO_PASSWORD, 'hunter2hunter2']) assert.ok(!raw.includes(secret), `${secret} left in the file`);
  const row = openSqlite(path.join(dir, 'stacks.db'), { readonly: true }).prepare('SELECT target, detail FROM audit_log').get() as {
    target: string;
    detail: string;
  };
  assert.match(row.target, /bob:\[redacted\]@git\.example\.com/);
  assert.equal(JSON.parse(row.detail).note, 'kept');
});

test('shapes: what is redacted and what is left alone', () => {
  const cases: [string, string][] = [
    ['/api/v2/keys/stk_AbCdEf0123456789abcdefABCDEF0123456789xyz_-q', '/api/v2/keys/stk_[redacted]'],
    ['/api/v3/search?query=hooks&key=hunter2&tokens=5000&api_key=s3cr3t', '/api/v3/search?query=hooks&key=[redacted]&tokens=5000&api_key=[redacted]'],
    ['Authorization: Bearer abc.def.ghi', 'Authorization: [redacted]'],
    ['sent Basic dXNlcjpwYXNzd29yZA== to the host', 'sent Basic [redacted] to the host'],
    ['https://alice:p4ss@git.example.com/a.git', 'https://alice:[redacted]@git.example.com/a.git'],
    ['ssh://git@git.example.com/a.git', 'ssh://git@git.example.com/a.git'],
    [`token ${GH_TOKEN} used`, 'token [redacted] used'],
    ['glpat-Abcdefghij0123456789xyz', '[redacted]'],
    ['{"licensee":"Test Co","signature":"q1w2E3r4T5y6U7i8O9p0+A/sDfGhJkLzXcVbNm12=="}', '{"licensee":"Test Co","signature":"[redacted]"}'],
    ['{"username":"bob","password":"hunter2","tokens":500}', '{"username":"bob","password":"[redacted]","tokens":500}'],
    [`cookie: stacks_session=${SESSION}; theme=dark`, 'cookie: [redacted]; theme=dark'],
    [`x-csrf-token=${CSRF}`, 'x-csrf-token=[redacted]'],
    [`a token ${CSRF} in text`, 'a token [redacted] in text'],
    [`${PEM}\nafter`, '[redacted private key]\nafter'],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7 (cut off)', '[redacted private key]'],
    ['{"licensee":"Test Co","signature":"q1w2E3r4T5y6U7…', '{"licensee":"Test Co","signature":"[redacted]"'],
    ['Unrecognized key: "extra"', 'Unrecognized key: "extra"'],
    ['commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39', 'commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39'],
    ['/fastify/fastify/docs/Reference/Hooks/Lifecycle2/More', '/fastify/fastify/docs/Reference/Hooks/Lifecycle2/More'],
    ['the session expired', 'the session expired'],
  ];
  for (const [input, expected] of cases) assert.equal(scrubSecrets(input), expected, input);
});

test('redaction takes linear time: no text makes it a way to stall the server', () => {
  // Repetitions that made earlier drafts of the rules quadratic (a scheme-like run, a secret word, an unclosed quote...).
  const units = ['a.', 'A1a+', 'token', 'password:"\\', '"key":', 'session=a;', 'Bearer ', 'https://a:', '-----BEGIN ', 'x'];
  for (const unit of units) {
    const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
    const started = process.hrtime.bigint();
    scrubSecrets(text);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(ms < 1500, `${JSON.stringify(unit)} x ${text.length / unit.length}: ${ms.toFixed(0)} ms`);
  }
});

async function auditEntries(s: TestServer): Promise<Entry[]> {
  const r = await s.api('/api/audit?limit=1000');
  assert.equal(r.status, 200);
  return ((await r.json()) as { entries: Entry[] }).entries;
}
