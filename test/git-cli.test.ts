import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, devLicense } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';
import { startGitHttpServer, TestRepo } from './helpers/git-repos.ts';

/** The CLI of the git source: credentials kept encrypted and never printed, `add git`, trust metadata, refresh. */
test('stacks git-hosts add|list|remove, add git, libraries set (trust metadata) and refresh on a data dir', async () => {
  const dir = tempDir();
  const root = tempDir('stacks-git-served-');
  const repo = new TestRepo(root, 'ops/runbook')
    .write({ 'docs/restart.md': '# Restarting\n\nDrain the node before restarting the ingest service.\n\n```bash\nsystemctl restart ingest\n```\n' })
    .commit('init')
    .publish();
  const server = await startGitHttpServer(root, { '/ops/': { user: 'bot', password: 'hunter2-cli' } });
  const env = { STACKS_GIT_CREDENTIALS_KEY: '5a'.repeat(32) };
  try {
    fs.writeFileSync(path.join(dir, 'license.json'), devLicense());
    const secretFile = path.join(dir, 'pw.txt');
    fs.writeFileSync(secretFile, 'hunter2-cli\n');
    const host = `127.0.0.1:${new URL(server.url).port}`;
    const add = await runCli(['git-hosts', 'add', host, '--username', 'bot', '--password-file', secretFile, '--data-dir', dir, '--dev'], env);
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, new RegExp(`Stored basic credentials for ${host.replace('.', '\\.')} \\(user bot\\) for the instance`));
    const list = await runCli(['git-hosts', 'list', '--json', '--data-dir', dir], env);
    assert.deepEqual(
      (JSON.parse(list.stdout) as { host: string; kind: string; scope: string }[]).map((h) => [h.host, h.kind, h.scope]),
      [[host, 'basic', 'instance']],
      "the CLI stores the instance's credentials",
    );
    const parsed = await runCli(['add', 'git', `${server.url}/ops/runbook.git`, '--data-dir', dir, '--dev'], env);
    assert.equal(parsed.code, 0, parsed.stderr + parsed.stdout);
    assert.match(parsed.stdout, /indexed \/ops\/runbook: \d+ snippets/);
    const set = await runCli(
      [
        'libraries',
        'set',
        '/ops/runbook',
        '--stars',
        '42',
        '--trust-score',
        '7.5',
        '--verified',
        'true',
        '--license',
        'Apache-2.0',
        '--json',
        '--data-dir',
        dir,
      ],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout) as object, {
      ...(JSON.parse(set.stdout) as object),
      stars: 42,
      trustScore: 7.5,
      verified: true,
      license: 'Apache-2.0',
    });
    repo.write({ 'docs/restart.md': '# Restarting\n\nDrain the node, then restart the ingest service.\n' }).commit('edit').publish();
    const refreshed = await runCli(['libraries', 'refresh', '/ops/runbook', '--json', '--data-dir', dir, '--dev'], env);
    assert.equal(refreshed.code, 0, refreshed.stderr);
    assert.equal((JSON.parse(refreshed.stdout) as { state: string }).state, 'succeeded');
    const audit = await runCli(['audit', '--json', '--data-dir', dir], env);
    const added = (JSON.parse(audit.stdout) as { entries: { action: string; teamspace: string | null; actor: { kind: string } }[] }).entries.find(
      (e) => e.action === 'gitHostAdd',
    );
    assert.deepEqual([added?.actor.kind, added?.teamspace], ['operator', null], "an instance credential's change is an instance-level entry");
    for (const out of [add, list, parsed, set, refreshed, audit]) assert.ok(!`${out.stdout}${out.stderr}`.includes('hunter2'), 'the secret is never printed');
    const removed = await runCli(['git-hosts', 'remove', host, '--data-dir', dir], env);
    assert.equal(removed.code, 0, removed.stderr);
    const none = await runCli(['git-hosts', 'list', '--data-dir', dir], env);
    assert.match(none.stdout, /no Git host credentials stored/);
  } finally {
    await server.close();
    repo.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
});
