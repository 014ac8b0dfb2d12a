import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { waitJob, snippetsOf } from './helpers/sources.ts';
import { call } from './helpers/teams.ts';
import { TestRepo } from './helpers/git-repos.ts';
import { sshKeyPair, startGitSshServer, type GitSshServer, type SshKeyPair } from './helpers/git-ssh.ts';

/**
 * Git over SSH end to end: the system OpenSSH client that Stacks runs, against an SSH server on
 * 127.0.0.1 (ssh2) that admits one key and runs the system `git upload-pack`. Covers the stored
 * key (refused without it, refused when wrong, used when right, on disk only while git runs,
 * never shown), the host key learned on first use, and a changed host key refused.
 */
let s: TestServer;
let sshServer: GitSshServer;
let impostor: GitSshServer | null = null;
let root = '';
const repos: TestRepo[] = [];
const userKey: SshKeyPair = sshKeyPair();

before(async () => {
  root = tempDir('stacks-git-ssh-');
  repos.push(
    new TestRepo(root, 'acme/tunnel')
      .write({
        'README.md': '# Tunnel\n\nThe tunnel library digs burrows for moles.\n',
        'docs/usage.md':
          '# Usage\n\n## Digging\n\nCall `dig(depth)` to open a burrow of that depth; the moles move in at dawn.\n\n```js\nimport { dig } from "tunnel";\ndig(3);\n```\n',
      })
      .commit('init')
      .publish(),
  );
  sshServer = await startGitSshServer(root, userKey);
  s = await startTestServer({ config: { gitCredentialsKey: 'cd'.repeat(32), gitTimeoutMs: 60_000 } });
});

after(async () => {
  await Promise.all([s?.close(), sshServer?.close(), impostor?.close()]);
  for (const r of repos) r.cleanup();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const parse = (repoUrl: string) => call(s, 'POST', '/api/parse', { repoUrl });
const host = () => `127.0.0.1:${sshServer.port}`;
const keyFilesLeft = () => {
  const work = path.join(s.dataDir, 'git', 'work');
  return fs.existsSync(work)
    ? fs
        .readdirSync(work, { recursive: true })
        .map(String)
        .filter((f) => /(^|\/)key-/.test(f))
    : [];
};

test('SSH: asked for a key without one, refused with the wrong one, cloned with the right one; the key is on disk only while git runs', async () => {
  const none = await parse(sshServer.url('acme/tunnel'));
  assert.equal(none.status, 422, JSON.stringify(none.body));
  assert.match(none.body.message as string, /asks for credentials/);

  const wrong = sshKeyPair();
  assert.equal((await call(s, 'POST', '/api/git-hosts', { host: host(), kind: 'ssh', secret: wrong.private })).status, 200);
  const refused = await parse(sshServer.url('acme/tunnel'));
  assert.equal(refused.status, 422);
  assert.match(refused.body.message as string, /refused the stored credentials/);

  assert.equal((await call(s, 'POST', '/api/git-hosts', { host: host(), kind: 'ssh', secret: userKey.private })).status, 200);
  const ok = await parse(sshServer.url('acme/tunnel'));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.project, '/acme/tunnel');
  const job = await waitJob(s, ok.body.queueId as number, 60_000);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  assert.ok((await snippetsOf(s, '/acme/tunnel')).some((x) => x.codeList.some((c) => c.code.includes('dig(3)'))));
  assert.ok(
    sshServer.commands.some((c) => c.includes('git-upload-pack') && c.includes('acme/tunnel.git')),
    'cloned over SSH',
  );

  const answer = await s.api('/api/v3/search?query=call+dig+with+a+depth+to+open+a+burrow&library=/acme/tunnel&type=txt');
  assert.equal(answer.status, 200);
  assert.match(await answer.text(), /dig\(3\)/);

  assert.deepEqual(keyFilesLeft(), [], 'the key file is removed when git is done');
  const listed = JSON.stringify((await call(s, 'GET', '/api/git-hosts')).body);
  const audit = JSON.stringify((await call(s, 'GET', '/api/audit?limit=200')).body);
  const keyBody = userKey.private.split('\n')[1]!;
  for (const text of [listed, audit, fs.readFileSync(path.join(s.dataDir, 'stacks.db')).toString('latin1')])
    assert.ok(!text.includes(keyBody), 'the private key is never shown or stored in clear');
  assert.match(fs.readFileSync(path.join(s.dataDir, 'git', 'known_hosts'), 'utf8'), /^127\.0\.0\.1 ssh-ed25519 /m, 'the host key is learned on first use');
});

test('SSH: a host that answers with another host key is refused as an impostor; nothing reaches it, nothing is indexed', async () => {
  repos.push(new TestRepo(root, 'acme/decoy').write({ 'README.md': '# Decoy\n\nA decoy repository the impostor would serve.\n' }).commit('init').publish());
  // The host name the first test's known_hosts line is for, the user key admitted, but another
  // host key: what a man in the middle looks like.
  impostor = await startGitSshServer(root, userKey);
  assert.equal((await call(s, 'POST', '/api/git-hosts', { host: `127.0.0.1:${impostor.port}`, kind: 'ssh', secret: userKey.private })).status, 200);
  const r = await parse(impostor.url('acme/decoy'));
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.match(r.body.message as string, /host key of 127\.0\.0\.1:\d+ is not the one first seen/);
  assert.deepEqual(impostor.commands, [], 'no git command reached the impostor');
  assert.equal(s.services.store.libraries.get('/acme/decoy'), null);
  assert.deepEqual(keyFilesLeft(), []);
});
