import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openSqlite } from '../lib/sqlite.ts';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { waitJob } from './helpers/sources.ts';
import { call } from './helpers/teams.ts';
import { startGitHttpServer, TestRepo, type GitHttpServer } from './helpers/git-repos.ts';
import { migrations } from '../server/store/migrations/index.ts';
import { encryptSecret, parseCredentialsKey, sealContext } from '../server/sources/git/credentials.ts';

/**
 * Git host credentials belong to the teamspace that stored them (or to the instance): end to end,
 * with teamspaces alpha and bravo and the default one on one real server, and one real Git host
 * (`git http-backend` behind node:http) that checks and records every Authorization header. The
 * data dir starts at schema 18 with a credential stored before owners existed (migration 019).
 */
const KEY_HEX = 'ab'.repeat(32);
const TOKEN_A = 'alpha-token-never-elsewhere';
const TOKEN_B = 'bravo-token-never-elsewhere';
const TOKEN_I = 'instance-token-from-before';
const basic = (token: string) => `Basic ${Buffer.from(`oauth2:${token}`).toString('base64')}`;

let s: TestServer;
let gitServer: GitHttpServer;
let root = '';
let host = '';
const repos: TestRepo[] = [];
let alpha = '';
let bravo = '';

/** A data dir at schema 18 (before owners) holding the instance's credential for `host`. */
function legacyDataDir(): string {
  const dir = tempDir();
  const db = openSqlite(path.join(dir, 'stacks.db'));
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of migrations.filter((x) => x.version <= 18)) {
    m.up(db);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
  const sealed = encryptSecret(parseCredentialsKey(KEY_HEX)!, sealContext(null, host), TOKEN_I);
  db.prepare(
    "INSERT INTO git_hosts (host, kind, username, secret_enc, created_at, updated_at) VALUES (?, 'token', 'oauth2', ?, '2025-01-01', '2025-01-01')",
  ).run(host, sealed);
  db.close();
  return dir;
}

before(async () => {
  root = tempDir('stacks-git-served-');
  const repo = (name: string, text: string) =>
    repos.push(
      new TestRepo(root, name)
        .write({ 'README.md': `# ${name}\n\n${text}\n` })
        .commit('init')
        .publish(),
    );
  repo('alpha/private', 'The alpha teamspace keeps its launch checklist here.');
  repo('bravo/private', 'The bravo teamspace keeps its incident runbook here.');
  repo('bravo/public', 'Anyone may read the bravo public handbook.');
  repo('inst/private', 'The instance keeps its release calendar here.');
  gitServer = await startGitHttpServer(root, {
    '/alpha/': { user: 'oauth2', password: TOKEN_A },
    '/bravo/private': { user: 'oauth2', password: TOKEN_B },
    '/inst/': { user: 'oauth2', password: TOKEN_I },
  });
  host = `127.0.0.1:${new URL(gitServer.url).port}`;
  s = await startTestServer({ dataDir: legacyDataDir(), config: { gitCredentialsKey: KEY_HEX, gitTimeoutMs: 60_000 } });
  alpha = (await s.services.teams.teamspaces.create({ name: 'alpha', owner: 'ann' })).key.key;
  bravo = (await s.services.teams.teamspaces.create({ name: 'bravo', owner: 'bob' })).key.key;
});

after(async () => {
  await Promise.all([s?.close(), gitServer?.close()]);
  for (const r of repos) r.cleanup();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const url = (name: string) => `${gitServer.url}/${name}.git`;
type HostsBody = { hosts: { host: string; kind: string; scope: string; updatedAt: string }[] };
const hostsOf = async (key: string) => (await call<HostsBody>(s, 'GET', '/api/git-hosts', undefined, key)).body.hosts;
type AuditBody = { entries: { action: string; outcome: string; teamspace: string | null; actor: { name?: string }; detail: Record<string, unknown> | null }[] };
const gitHostEntries = async (key: string) =>
  (await call<AuditBody>(s, 'GET', '/api/audit?limit=200', undefined, key)).body.entries.filter((e) => e.action.startsWith('gitHost'));

/** Indexes a repository as `key`; answers the job's state and the Authorization headers the host got meanwhile. */
async function index(name: string, key: string): Promise<{ status: number; state: string | null; error: string | null; sent: (string | null)[] }> {
  const from = gitServer.authorizations.length;
  const r = await call<{ queueId?: number; message?: string }>(s, 'POST', '/api/parse', { repoUrl: url(name) }, key);
  const job = r.status === 200 ? await waitJob(s, r.body.queueId!) : null;
  return {
    status: r.status,
    state: job?.state ?? null,
    error: job?.error ?? r.body.message ?? null,
    sent: gitServer.authorizations.slice(from).map((a) => a.authorization),
  };
}

test("a teamspace's credential is its own: listed, used and changed only by it; another teamspace's looks absent (404)", async () => {
  const stored = await call(s, 'POST', '/api/git-hosts', { host, kind: 'token', secret: TOKEN_A }, alpha);
  assert.equal(stored.status, 200, JSON.stringify(stored.body));
  assert.equal(stored.body.scope, 'teamspace');
  const [before] = await hostsOf(alpha);
  assert.deepEqual([before?.host, before?.scope], [host, 'teamspace']);

  // Bravo: sees nothing, fetches with nothing, and cannot reach alpha's repository with alpha's token
  // (tried before alpha indexes it: afterwards the library ID is alpha's and bravo gets 409 first).
  assert.deepEqual(await hostsOf(bravo), []);
  const open = await index('bravo/public', bravo);
  assert.equal(open.state, 'succeeded', open.error ?? '');
  assert.ok(open.sent.length > 0 && open.sent.every((h) => h === null), `no credential sent for bravo: ${JSON.stringify(open.sent)}`);
  const denied = await index('alpha/private', bravo);
  assert.equal(denied.status, 422);
  assert.match(denied.error ?? '', /asks for credentials/);
  assert.ok(denied.sent.length > 0 && denied.sent.every((h) => h === null));

  const a = await index('alpha/private', alpha);
  assert.equal(a.state, 'succeeded', a.error ?? '');
  assert.ok(a.sent.length > 0 && a.sent.every((h) => h === basic(TOKEN_A)), 'alpha fetches with its own token');

  // Replacing and deleting alpha's: bravo's DELETE is the 404 of a credential never stored; bravo's POST stores bravo's own.
  const missing = await call(s, 'DELETE', `/api/git-hosts/${encodeURIComponent(host)}`, undefined, bravo);
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: 'not_found', message: `No credentials are stored for ${host}.` });
  const own = await call(s, 'POST', '/api/git-hosts', { host, kind: 'token', secret: TOKEN_B }, bravo);
  assert.equal(own.status, 200, JSON.stringify(own.body));
  assert.deepEqual(
    (await hostsOf(bravo)).map((h) => [h.host, h.scope]),
    [[host, 'teamspace']],
  );
  assert.deepEqual(await hostsOf(alpha), [before], "alpha's credential is untouched");
  const b = await index('bravo/private', bravo);
  assert.equal(b.state, 'succeeded', b.error ?? '');
  assert.ok(b.sent.length > 0 && b.sent.every((h) => h === basic(TOKEN_B)), "bravo fetches with its own token, never alpha's");
  const refresh = await call<{ queueId: number }>(s, 'POST', '/api/projects/alpha/private/refresh', undefined, alpha);
  const from = gitServer.authorizations.length;
  assert.equal((await waitJob(s, refresh.body.queueId)).state, 'succeeded');
  assert.ok(
    gitServer.authorizations.slice(from).every((x) => x.authorization === basic(TOKEN_A)),
    "alpha's refresh still uses alpha's token",
  );

  // The instance's credentials are not theirs to touch.
  assert.equal((await call(s, 'POST', '/api/git-hosts', { host, kind: 'token', secret: 'x', scope: 'instance' }, bravo)).status, 403);
  assert.equal((await call(s, 'DELETE', `/api/git-hosts/${encodeURIComponent(host)}?scope=instance`, undefined, bravo)).status, 403);

  // Alpha deletes its own (bravo's stays); a second delete is the same 404 bravo got.
  assert.equal((await call(s, 'DELETE', `/api/git-hosts/${encodeURIComponent(host)}`, undefined, alpha)).status, 204);
  assert.deepEqual((await call(s, 'DELETE', `/api/git-hosts/${encodeURIComponent(host)}`, undefined, alpha)).body, missing.body);
  assert.deepEqual(await hostsOf(alpha), []);
  assert.equal((await hostsOf(bravo)).length, 1);

  // Each change is in its owner's audit log, and only there; never a secret.
  const alphaLog = await gitHostEntries(alpha);
  assert.deepEqual(alphaLog.map((e) => [e.action, e.outcome, e.teamspace, e.actor.name]).reverse(), [
    ['gitHostAdd', 'ok', 'alpha', 'ann'],
    ['gitHostRemove', 'ok', 'alpha', 'ann'],
    ['gitHostRemove', 'failed', 'alpha', 'ann'],
  ]);
  const bravoLog = await gitHostEntries(bravo);
  assert.deepEqual(bravoLog.map((e) => [e.action, e.outcome, e.teamspace]).reverse(), [
    ['gitHostRemove', 'failed', 'bravo'],
    ['gitHostAdd', 'ok', 'bravo'],
    ['gitHostAdd', 'refused', 'bravo'],
    ['gitHostRemove', 'refused', 'bravo'],
  ]);
  const all = JSON.stringify([alphaLog, bravoLog]);
  for (const secret of [TOKEN_A, TOKEN_B]) assert.ok(!all.includes(secret));
});

test("a credential stored before owners is the instance's: listed to the default teamspace, used for its repositories only", async () => {
  const listed = await hostsOf(s.key);
  assert.deepEqual(
    listed.map((h) => [h.host, h.scope]),
    [[host, 'instance']],
  );
  for (const key of [alpha, bravo]) assert.ok(!(await hostsOf(key)).some((h) => h.scope === 'instance'));
  // An admin of the default teamspace is not the instance's owner: it neither sees nor changes them.
  const admin = await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'dana', role: 'admin' }, s.key);
  assert.equal(admin.status, 201, JSON.stringify(admin.body));
  assert.ok(!(await hostsOf(admin.body.key.key)).some((h) => h.scope === 'instance'));
  assert.equal((await call(s, 'POST', '/api/git-hosts', { host, kind: 'token', secret: 'x', scope: 'instance' }, admin.body.key.key)).status, 403);

  // Bravo, with its own token for the host, never gets the instance's; the default teamspace does.
  const other = await index('inst/private', bravo);
  assert.equal(other.status, 422);
  assert.ok(
    other.sent.every((h) => h === basic(TOKEN_B)),
    JSON.stringify(other.sent),
  );
  const mine = await index('inst/private', s.key);
  assert.equal(mine.state, 'succeeded', mine.error ?? '');
  assert.ok(mine.sent.length > 0 && mine.sent.every((h) => h === basic(TOKEN_I)));

  // The default teamspace's owner replaces the instance's credential; the change is in its log, not alpha's or bravo's.
  const replaced = await call(s, 'POST', '/api/git-hosts', { host, kind: 'token', secret: TOKEN_I, scope: 'instance' }, s.key);
  assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
  assert.equal(replaced.body.scope, 'instance');
  const entry = (await gitHostEntries(s.key)).find((e) => e.action === 'gitHostAdd');
  assert.deepEqual([entry?.outcome, entry?.teamspace, entry?.detail?.scope], ['ok', 'default', 'instance']);
  for (const key of [alpha, bravo]) assert.ok(!(await gitHostEntries(key)).some((e) => e.detail?.scope === 'instance' && e.outcome === 'ok'));
});
