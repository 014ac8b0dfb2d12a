import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir, waitFor } from './helpers/server.ts';
import { call } from './helpers/teams.ts';
import { startGitHttpServer, TestRepo } from './helpers/git-repos.ts';

interface Report {
  created: { libraryId: string; jobId: number }[];
  updated: { libraryId: string; jobId: number | null }[];
  unchanged: string[];
  pruned: string[];
}

/**
 * A Git repository declared in sources.yaml (served by `git http-backend` on 127.0.0.1): created at
 * start through the same service as POST /api/parse, indexed again when its options change, and
 * pruned when the file drops it.
 */
test('sources.yaml: a declared Git repository is indexed, updated when its options change, and pruned', async () => {
  const root = tempDir('stacks-git-declared-');
  const repo = new TestRepo(root, 'acme/handbook')
    .write({
      'README.md': '# Handbook\n\nThe onboarding checklist has seven steps.\n',
      'docs/deploy.md': '# Deploying\n\nDeploys roll out in three waves behind a canary.\n',
      'notes/draft.md': '# Draft\n\nA draft page that the excludeFolders option leaves out.\n',
    })
    .commit('init')
    .publish();
  const gitServer = await startGitHttpServer(root);
  const dataDir = tempDir();
  const id = '/acme/handbook';
  const write = (options: string) => fs.writeFileSync(path.join(dataDir, 'sources.yaml'), `sources:\n  - git: ${gitServer.url}/acme/handbook.git\n${options}`);
  write('');
  const s = await startTestServer({ dataDir, config: { sourcesSchedule: 'off', gitCredentialsKey: 'cd'.repeat(32) } });
  try {
    await waitFor(async () => (await s.services.store.declared.list()).length === 1, 30_000);
    await s.services.jobs.idle();
    assert.ok(s.services.store.libraries.currentVersion(id, ''), 'indexed at start');
    const ask = async (q: string) => await (await s.api(`/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${encodeURIComponent(q)}`)).text();
    assert.match(await ask('deploy canary waves'), /three waves behind a canary/);
    assert.match(await ask('draft'), /draft page that the excludeFolders option leaves out/);

    // New options: indexed again, now without the notes folder.
    write('    excludeFolders: [notes]\n');
    let r = await call<Report>(s, 'POST', '/api/sources/reconcile', {});
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.updated.map((u) => u.libraryId),
      [id],
    );
    assert.ok(r.body.updated[0]!.jobId, 'new options: indexed again');
    await s.services.jobs.idle();
    assert.doesNotMatch(await ask('draft'), /draft page that the excludeFolders option leaves out/);
    assert.match(await ask('onboarding checklist'), /seven steps/);

    // Dropped from the file: pruned, as it created the library.
    fs.writeFileSync(path.join(dataDir, 'sources.yaml'), 'sources: []\n');
    r = await call<Report>(s, 'POST', '/api/sources/reconcile', {});
    assert.deepEqual(r.body.pruned, [id]);
    assert.equal(s.services.store.libraries.get(id), null);
  } finally {
    await Promise.all([s.close(), gitServer.close()]);
    repo.cleanup();
    fs.rmSync(root, { recursive: true, force: true });
  }
});
