import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { waitJob, snippetsOf } from './helpers/sources.ts';
import { call } from './helpers/teams.ts';
import { startGitHttpServer, TestRepo, type GitHttpServer } from './helpers/git-repos.ts';
import { buildWidgetRepo } from './helpers/git-fixture.ts';
import type { Job } from '../lib/model.ts';

/**
 * Git repositories as a source, end to end: real repositories built on disk, served by
 * `git http-backend` on 127.0.0.1 (one path prefix behind basic authentication), indexed by the
 * real server through POST /api/parse, refreshed, asked for versions and searched.
 */
let s: TestServer;
let gitServer: GitHttpServer;
const repos: TestRepo[] = [];
let root = '';
const PASSWORD = 'pa55-word-never-shown';
/** A clone may write at most this much (STACKS_GIT_MAX_BYTES): the "huge" repository goes over it. */
const MAX_BYTES = 2 * 1024 * 1024;

before(async () => {
  root = tempDir('stacks-git-served-');
  repos.push(buildWidgetRepo(root));
  repos.push(
    new TestRepo(root, 'private/secret').write({ 'README.md': '# Secret\n\nThe secret handshake needs two knocks and a whistle.\n' }).commit('init').publish(),
  );
  repos.push(
    new TestRepo(root, 'acme/growing')
      .write({ 'docs/intro.md': '# Growing\n\nThe growing repository explains seed germination in detail.\n' })
      .commit('init')
      .publish(),
  );
  repos.push(
    new TestRepo(root, 'acme/sparse')
      .write({
        'README.md': '# Sparse\n\nThe root readme of the sparse repository is always read.\n',
        'docs/a.md': '# A\n\nThe docs folder holds the alpha page of the sparse repository.\n',
        'docs/drafts/b.md': '# B\n\nA draft page that excludeFolders leaves out of the index.\n',
        'other/c.md': '# C\n\nOutside the folders: never checked out, never indexed.\n',
      })
      .commit('init')
      .publish(),
  );
  repos.push(
    new TestRepo(root, 'team/notes')
      .write({ 'README.md': '# Team notes\n\nThe quarterly planning ritual happens on the first Monday.\n' })
      .commit('init')
      .publish(),
  );
  gitServer = await startGitHttpServer(root, { '/private/': { user: 'alice', password: PASSWORD } });
  s = await startTestServer({ config: { gitCredentialsKey: 'ab'.repeat(32), gitMaxBytes: MAX_BYTES, gitTimeoutMs: 60_000 } });
});

after(async () => {
  await Promise.all([s?.close(), gitServer?.close()]);
  for (const r of repos) r.cleanup();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const url = (name: string) => `${gitServer.url}/${name}.git`;
const parse = (body: Record<string, unknown>, auth?: string | null) => call(s, 'POST', '/api/parse', body, auth);
const jobsOf = (libraryId: string, kind?: string) => s.services.jobs.list({ libraryId, limit: 100, ...(kind ? { kind } : {}) });
async function settle(libraryId: string): Promise<Job[]> {
  for (let i = 0; i < 600; i++) {
    const jobs = jobsOf(libraryId);
    if ((await jobs).every((j) => j.state !== 'queued' && j.state !== 'running')) return jobs;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`jobs of ${libraryId} did not finish`);
}

test('parse: the queue body of parse-website; every format, front matter, MDX text, exclusions, stacks.json, license, web links, previous versions', async () => {
  const r = await parse({ repoUrl: url('acme/widget') });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body).sort(), ['message', 'position', 'project', 'queueId']);
  assert.equal(r.body.project, '/acme/widget');
  const job = await waitJob(s, r.body.queueId as number);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  const lib = s.services.store.libraries.get('/acme/widget')!;
  assert.equal(lib.sourceType, 'repo');
  assert.equal(lib.title, 'Widget Toolkit');
  assert.equal(lib.license, 'MIT', 'detected from the LICENSE file');
  assert.equal(lib.branch, 'main');
  const snippets = await snippetsOf(s, '/acme/widget');
  const text = snippets.map((x) => `${x.title}\n${x.description}\n${x.content}\n${x.codeList.map((c) => c.code).join('\n')}`).join('\n');
  for (const excluded of ['excludedjapanese', 'excludedarchive', 'excludedinternal', 'excludedchangelog', 'IGNORED OUTPUT', 'computeFrobnication'])
    assert.ok(!text.includes(excluded), `${excluded} must not be in the docs partition`);
  assert.ok(!/<Callout|<Tab\b|import \{|props\.theme/.test(text), 'MDX components, imports and expressions are reduced to text');
  assert.match(text, /Gizmo components must be mounted inside/);
  const files = new Set(snippets.map((x) => x.sourceFile));
  for (const f of [
    'README.md',
    'docs/guide.md',
    'docs/components.mdx',
    'docs/api.rst',
    'docs/tutorial.ipynb',
    'docs/faq.txt',
    'docs/logging/child-loggers.md',
    'docs/logging/redaction.md',
  ])
    assert.ok(files.has(f), `${f} indexed`);
  const guide = snippets.find((x) => x.kind === 'code' && x.sourceFile === 'docs/guide.md')!;
  assert.equal(guide.pageTitle, 'Widget Guide', 'front matter title');
  assert.match(guide.sourceId, new RegExp(`^${gitServer.url}/acme/widget/blob/main/docs/guide\\.md#mounting$`));
  const notebook = snippets.find((x) => x.kind === 'code' && x.sourceFile === 'docs/tutorial.ipynb')!;
  assert.equal(notebook.language, 'python');
  assert.ok(snippets.some((x) => x.kind === 'code' && x.sourceFile === 'docs/api.rst' && x.codeList[0]!.code.includes('configure_sprockets(tension=4)')));
  // The rules of stacks.json come with answers; previousVersions pre-indexes v1.0.0.
  await settle('/acme/widget');
  const ctx = await call<{ rules?: { libraryOwn: string[] } }>(s, 'GET', '/api/v2/context?libraryId=/acme/widget&query=mount+a+widget&type=json');
  assert.deepEqual(ctx.body.rules?.libraryOwn, ['Always dispose widgets with widget.dispose().']);
  assert.equal(s.services.store.libraries.currentVersion('/acme/widget', 'v1.0.0')?.state, 'ready', 'previousVersions indexed');
  const view = await call<{ repoUrl: string; license: string }>(s, 'GET', '/api/libraries/acme/widget');
  assert.equal(view.body.repoUrl, url('acme/widget'));
});

test('a question the documentation does not answer is answered from the dynamic source index (isDynamic, sourceFile), below documentation', async () => {
  const r = await call<{ codeSnippets: { codeTitle: string; isDynamic?: boolean; sourceFile?: string; codeId: string }[] }>(
    s,
    'GET',
    '/api/v2/context?libraryId=/acme/widget&query=computeFrobnication+checksum+of+a+manifest&type=json',
  );
  assert.equal(r.status, 200);
  const dyn = r.body.codeSnippets.find((c) => c.isDynamic);
  assert.ok(dyn, JSON.stringify(r.body.codeSnippets.map((c) => c.codeTitle)));
  assert.equal(dyn.sourceFile, 'src/frob.ts');
  assert.equal(dyn.codeTitle, 'computeFrobnication()');
  assert.match(dyn.codeId, /\/acme\/widget\/blob\/main\/src\/frob\.ts#L\d+$/);
  const search = await call<{ codeSnippets: { isDynamic?: boolean; sourceFile?: string; libraryId: string }[] }>(
    s,
    'GET',
    '/api/v3/search?query=computeFrobnication+checksum&library=/acme/widget&type=json',
  );
  assert.ok(search.body.codeSnippets.some((c) => c.isDynamic && c.sourceFile === 'src/frob.ts' && c.libraryId === '/acme/widget'));
  // A question the docs answer well: no source-code snippet ranks above the documentation.
  const docs = await call<{ codeSnippets: { isDynamic?: boolean }[] }>(
    s,
    'GET',
    '/api/v2/context?libraryId=/acme/widget&query=mount+a+widget+with+mountWidget&type=json',
  );
  assert.equal(docs.body.codeSnippets[0]?.isDynamic, undefined);
});

test('refresh: only the changed file is parsed again; 409 while queued or running; 404 for an unknown project', async () => {
  const widget = repos[0]!;
  widget
    .write({ 'docs/faq.txt': 'Why does the widget flicker?\n\nThe warp coil of the widget needs a warm-up of five seconds before the first frame.\n' })
    .commit('faq')
    .publish();
  const before = (await snippetsOf(s, '/acme/widget'))
    .filter((x) => x.sourceFile === 'docs/guide.md')
    .map((x) => x.contentHash)
    .sort();
  const first = await call<{ queueId: number; project: string }>(s, 'POST', '/api/projects/acme/widget/refresh');
  assert.equal(first.status, 202, JSON.stringify(first.body));
  const second = await call(s, 'POST', '/api/projects/acme/widget/refresh');
  assert.equal(second.status, 409);
  const job = await waitJob(s, first.body.queueId);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  assert.equal(job.progress.parsed, 1, JSON.stringify(job.progress));
  assert.equal(job.progress.reused, (job.progress.files as number) - 1);
  assert.equal(typeof (job.progress.timings as Record<string, number>).fetchMs, 'number', 'the kept checkout was updated, not cloned again');
  const after = await snippetsOf(s, '/acme/widget');
  assert.ok(after.some((x) => x.content.includes('warp coil')));
  assert.ok(!after.some((x) => x.content.includes('flux capacitor')));
  assert.deepEqual(
    after
      .filter((x) => x.sourceFile === 'docs/guide.md')
      .map((x) => x.contentHash)
      .sort(),
    before,
  );
  assert.ok(after.length > 10);
  assert.equal((await call(s, 'POST', '/api/projects/acme/nothing/refresh')).status, 404);
});

test('a version that exists as a tag is served unverified and queued, then served verified', async () => {
  const ask = () => s.api('/api/v3/search?query=mount+a+widget+with+hot+reload&library=/acme/widget&version=1.1&type=json');
  const first = await ask();
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('x-stacks-search-version'), 'unverified');
  // The tag lookup runs after the answer.
  await s.services.versions.settled();
  const fetches = jobsOf('/acme/widget', 'version-fetch');
  assert.equal((await fetches).length, 1);
  assert.equal((await fetches)[0]!.payload.version, '1.1');
  const job = await waitJob(s, (await fetches)[0]!.id);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  const second = await ask();
  assert.equal(second.headers.get('x-stacks-search-version'), 'verified');
  const body = (await second.json()) as { codeSnippets: { libraryId: string; codeList: { code: string }[] }[] };
  assert.ok(body.codeSnippets.some((c) => c.libraryId === '/acme/widget/v1.1.0' && c.codeList[0]!.code.includes('hotReload')));
});

test('a version that is no tag of the repository queues nothing; the answer says it is not indexed', async () => {
  for (const version of ['99', '1.7', '2']) {
    const res = await s.api(`/api/v3/search?query=mount+a+widget&library=/acme/widget&version=${version}&type=json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-stacks-search-reason'), 'versionUnverified');
    const body = (await res.json()) as { version: { libraries: { served: string | null; status: string }[] } };
    assert.deepEqual(
      body.version.libraries.map((l) => [l.served, l.status]),
      [[null, 'unverified']],
    );
  }
  await s.services.versions.settled();
  const asked = (await jobsOf('/acme/widget', 'version-fetch')).map((j) => j.payload.version);
  assert.deepEqual(
    asked.filter((v) => v !== '1.1'),
    [],
    'only the version the repository has a tag for was queued',
  );
});

test('credentials: asked for and refused without them, refused when wrong, used when right; never shown or audited', async () => {
  const denied = await parse({ repoUrl: url('private/secret') });
  assert.equal(denied.status, 422);
  assert.match(denied.body.message as string, /asks for credentials.*git-hosts add/);
  const host = `127.0.0.1:${new URL(gitServer.url).port}`;
  assert.equal((await call(s, 'POST', '/api/git-hosts', { host, kind: 'basic', username: 'alice', secret: 'wrong' })).status, 200);
  const refused = await parse({ repoUrl: url('private/secret') });
  assert.equal(refused.status, 422);
  assert.match(refused.body.message as string, /refused the stored credentials/);
  assert.equal((await call(s, 'POST', '/api/git-hosts', { host, kind: 'basic', username: 'alice', secret: PASSWORD })).status, 200);
  const ok = await parse({ repoUrl: url('private/secret') });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal((await waitJob(s, ok.body.queueId as number)).state, 'succeeded');
  assert.ok((await snippetsOf(s, '/private/secret')).some((x) => x.content.includes('two knocks')));
  const listed = await call(s, 'GET', '/api/git-hosts');
  assert.deepEqual(
    (listed.body as { hosts: { host: string; kind: string; username: string }[] }).hosts.map((h) => [h.host, h.kind, h.username]),
    [[host, 'basic', 'alice']],
  );
  const audit = await call(s, 'GET', '/api/audit?limit=200');
  const audited = JSON.stringify(audit.body);
  assert.ok(audited.includes('gitHostAdd') && audited.includes('parseRepo') && audited.includes('projectRefresh'));
  for (const secret of [PASSWORD, 'wrong', Buffer.from(`alice:${PASSWORD}`).toString('base64')]) {
    assert.ok(!audited.includes(secret) && !JSON.stringify(listed.body).includes(secret));
    assert.ok(!fs.readFileSync(path.join(s.dataDir, 'stacks.db')).includes(secret), 'stored encrypted');
  }
});

test('a clone over the size limit is refused cleanly: the served version stays, nothing is left in the work folder', async () => {
  const r = await parse({ repoUrl: url('acme/growing') });
  assert.equal((await waitJob(s, r.body.queueId as number)).state, 'succeeded');
  const served = s.services.store.libraries.currentVersion('/acme/growing', '')!;
  repos[2]!
    .write({ 'assets/blob.bin': Buffer.from(Array.from({ length: MAX_BYTES + 512 * 1024 }, () => Math.floor(Math.random() * 256))) })
    .commit('big')
    .publish();
  const refresh = await call<{ queueId: number }>(s, 'POST', '/api/projects/acme/growing/refresh');
  const job = await waitJob(s, refresh.body.queueId);
  assert.equal(job.state, 'failed');
  assert.match(job.error ?? '', /larger than .* bytes \(STACKS_GIT_MAX_BYTES\)/);
  assert.equal(s.services.store.libraries.currentVersion('/acme/growing', '')!.id, served.id);
  assert.deepEqual(
    fs.readdirSync(path.join(s.dataDir, 'git', 'work')).filter((f) => f.startsWith('job-')),
    [],
  );
  const kept = fs.readdirSync(path.join(s.dataDir, 'git', 'cache'));
  assert.deepEqual(
    kept.filter((f) => f.endsWith('.lock')),
    [],
    'no lock is left',
  );
  assert.ok(
    !kept.some((f) => f.endsWith('.json') && fs.readFileSync(path.join(s.dataDir, 'git', 'cache', f), 'utf8').includes('/acme/growing')),
    'the failed checkout is dropped',
  );
});

test('folders: a sparse checkout (root files come along for stacks.json and LICENSE; only the folders are indexed); excludeFolders leaves more out', async () => {
  const r = await parse({ repoUrl: url('acme/sparse'), folders: ['docs'], excludeFolders: ['docs/drafts'] });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal((await waitJob(s, r.body.queueId as number)).state, 'succeeded');
  assert.deepEqual([...new Set((await snippetsOf(s, '/acme/sparse')).map((x) => x.sourceFile))].sort(), ['docs/a.md']);
  assert.deepEqual((await s.services.store.git.repo('/acme/sparse'))!.options.folders, ['docs']);
});

test('the address guard and the transports: metadata addresses, file://, ext:: and credentials in URLs are refused', async () => {
  assert.equal((await parse({ repoUrl: 'http://169.254.169.254/latest.git' })).status, 403);
  for (const bad of ['file:///etc/passwd', 'ext::sh -c touch% /tmp/pwned', '/srv/git/repo.git', `http://alice:${PASSWORD}@127.0.0.1/x.git`]) {
    const r = await parse({ repoUrl: bad });
    assert.equal(r.status, 400, `${bad}: ${JSON.stringify(r.body)}`);
  }
});

test("visibility: a member's repository stays in its teamspace; another teamspace gets 404", async () => {
  const member = (await s.services.teams.members.add(s.services.teams.defaultTeamspaceId(), 'operator', { name: 'mo', role: 'member' })).key!.key;
  const r = await parse({ repoUrl: url('team/notes') }, member);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal((await waitJob(s, r.body.queueId as number)).state, 'succeeded');
  assert.equal(s.services.store.libraries.get('/team/notes')!.visibility, 'teamspace');
  const anonymous = await call(s, 'GET', '/api/v2/context?libraryId=/team/notes&query=planning', undefined, null);
  assert.equal(anonymous.status, 404);
  const other = (await s.services.teams.teamspaces.create({ name: 'blue', owner: 'bea' })).key.key;
  assert.equal((await call(s, 'POST', '/api/projects/team/notes/refresh', undefined, other)).status, 404);
  assert.equal((await call(s, 'POST', '/api/projects/team/notes/refresh', undefined, member)).status, 202);
  await settle('/team/notes');
});
