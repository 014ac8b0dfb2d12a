import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir, waitFor, type TestServer } from './helpers/server.ts';
import { startFixtureServer } from './helpers/fixtures.ts';
import { call } from './helpers/teams.ts';

interface Report {
  found: boolean;
  created: { libraryId: string; jobId: number }[];
  updated: { libraryId: string; jobId: number | null }[];
  unchanged: string[];
  pruned: string[];
  adopted: string[];
  released: string[];
  errors: { libraryId: string; line: number; error: string }[];
}

const reconcile = (s: TestServer, key?: string) => call<Report & { error?: string; message?: string }>(s, 'POST', '/api/sources/reconcile', {}, key);
const ids = (r: Report) => ({
  created: r.created.map((x) => x.libraryId).sort(),
  updated: r.updated.map((x) => x.libraryId).sort(),
  unchanged: [...r.unchanged].sort(),
  pruned: r.pruned,
  adopted: r.adopted,
  released: r.released,
  errors: r.errors,
});

test('sources.yaml: reconciled at start and on request; created, updated, unchanged, pruned (only what it created); a broken file is refused whole with line numbers', async () => {
  const fixtures = await startFixtureServer();
  const dataDir = tempDir();
  const files = `${fixtures.url}/files`;
  const llms = `/llmstxt/${new URL(fixtures.url).host.replace(/[.:]/g, '_')}-files-llmstxt-pydeprecate.llms-full.txt`;
  const uspto = `/openapi/${new URL(fixtures.url).host.replace(/[.:]/g, '_')}-files-openapi-uspto.openapi.yaml`;
  const kratos = `/openapi/${new URL(fixtures.url).host.replace(/[.:]/g, '_')}-files-openapi-ory-kratos.openapi.json`;
  const site = `/websites/127-0-0-1-${new URL(fixtures.url).port}-static`;
  const write = (text: string) => fs.writeFileSync(path.join(dataDir, 'sources.yaml'), text);
  write(`# what this instance indexes
sources:
  - llmstxt: ${files}/llmstxt/pydeprecate.llms-full.txt
  - openapi: ${files}/openapi/uspto.openapi.yaml
  - website: ${fixtures.url}/static/
    maxPages: 2
    maxDepth: 1
`);
  const s = await startTestServer({ dataDir, config: { sourcesSchedule: 'off', crawlAllowPrivate: true } });
  try {
    // At start: the three are queued and built.
    await waitFor(async () => (await s.services.store.declared.list()).length === 3, 30_000);
    await s.services.jobs.idle();
    for (const id of [llms, uspto, site]) assert.ok(s.services.store.libraries.currentVersion(id, ''), `${id} is served`);
    assert.ok((await s.services.store.declared.list()).every((r) => r.created));

    let r = await reconcile(s);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(ids(r.body), { created: [], updated: [], unchanged: [llms, site, uspto].sort(), pruned: [], adopted: [], released: [], errors: [] });

    // A library added by hand, then declared: adopted, never deleted by the file.
    assert.equal((await call(s, 'POST', '/api/v2/add/openapi', { openApiUrl: `${files}/openapi/ory-kratos.openapi.json` })).status, 200);
    await s.services.jobs.idle();
    write(`sources:
  - llmstxt: ${files}/llmstxt/pydeprecate.llms-full.txt
    schedule: "0 4 * * *"
  - openapi: ${files}/openapi/ory-kratos.openapi.json
  - website: ${fixtures.url}/static/
    maxPages: 3
    maxDepth: 1
`);
    r = await reconcile(s);
    assert.deepEqual(ids(r.body), { created: [], updated: [llms, site].sort(), unchanged: [], pruned: [uspto], adopted: [kratos], released: [], errors: [] });
    assert.equal(r.body.updated.find((u) => u.libraryId === llms)!.jobId, null, 'a new schedule needs no rebuild');
    assert.ok(r.body.updated.find((u) => u.libraryId === site)!.jobId, 'new crawl options: crawled again');
    assert.equal(s.services.store.libraries.get(uspto), null, 'pruned: the library it created is deleted');
    assert.deepEqual(await s.services.declared.schedules(), [{ libraryId: llms, schedule: '0 4 * * *' }]);
    await s.services.jobs.idle();

    write(`sources:
  - llmstxt: ${files}/llmstxt/pydeprecate.llms-full.txt
    schedule: "0 4 * * *"
  - website: ${fixtures.url}/static/
    maxPages: 3
    maxDepth: 1
`);
    r = await reconcile(s);
    assert.deepEqual(ids(r.body), { created: [], updated: [], unchanged: [llms, site].sort(), pruned: [], adopted: [], released: [kratos], errors: [] });
    assert.ok(s.services.store.libraries.currentVersion(kratos, ''), 'released, not deleted: the file did not create it');

    await brokenFilesChangeNothing(s, write, files, fixtures.url);

    // Only the default teamspace's owners and admins reconcile; an empty list prunes what the file created.
    const member = await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'mia', role: 'member' });
    assert.equal((await reconcile(s, member.body.key.key)).status, 403);
    write('sources: []\n');
    r = await reconcile(s);
    assert.deepEqual(ids(r.body), { created: [], updated: [], unchanged: [], pruned: [llms, site].sort(), adopted: [], released: [], errors: [] });
    assert.equal(s.services.store.libraries.get(site), null);
    const audit = (await s.services.audit.list({ limit: 100, action: 'sourcesReconcile' })).entries;
    assert.ok(audit.some((e) => e.outcome === 'ok') && audit.some((e) => e.outcome === 'failed'), 'reconciles are audited');
  } finally {
    await Promise.all([s.close(), fixtures.close()]);
  }
});

/** A file that does not parse, or whose entries are invalid, is refused whole: 400 naming every line, and nothing applied. */
async function brokenFilesChangeNothing(s: TestServer, write: (text: string) => void, files: string, origin: string): Promise<void> {
  const before = JSON.stringify(await s.services.store.declared.list());
  write(`sources:
  - llmstxt: ${files}/llmstxt/pydeprecate.llms-full.txt
  - website: [${origin}/static/
`);
  let r = await reconcile(s);
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'validation_error');
  assert.match(r.body.message!, /^sources\.yaml line \d+: /);
  write(`sources:
  - llmstxt: ${files}/llmstxt/pydeprecate.llms-full.txt
  - website: ${origin}/static/
    maxPages: lots
    maxDeep: 1
  - svn: https://example.com/repo
  - openapi: ${files}/openapi/uspto.openapi.yaml
    schedule: every night
  - git: not a repository
`);
  r = await reconcile(s);
  assert.equal(r.status, 400);
  assert.equal(
    r.body.message,
    [
      'sources.yaml is not valid, nothing was applied:',
      'sources.yaml line 4: sources[1].maxPages: Invalid input: expected number, received string',
      'sources.yaml line 5: sources[1].maxDeep: unknown option "maxDeep"',
      'sources.yaml line 6: sources[2]: names no kind of source: add one of website, llmstxt, git, openapi',
      'sources.yaml line 8: sources[3].schedule: "every night" is not a cron expression (e.g. "0 3 * * *")',
      'sources.yaml line 9: sources[4].git: must be a Git repository URL (https://, ssh://, git:// or git@host:owner/repo)',
    ].join('\n'),
  );
  assert.equal(JSON.stringify(await s.services.store.declared.list()), before, 'nothing applied');
}

test('sources.yaml: a declared schedule re-indexes its source; no file means nothing declared and nothing pruned', async () => {
  const fixtures = await startFixtureServer();
  const dataDir = tempDir();
  const llms = `/llmstxt/${new URL(fixtures.url).host.replace(/[.:]/g, '_')}-files-llmstxt-pydeprecate.llms-full.txt`;
  // Every two seconds (node-cron's six-field form).
  fs.writeFileSync(
    path.join(dataDir, 'sources.yaml'),
    `sources:\n  - llmstxt: ${fixtures.url}/files/llmstxt/pydeprecate.llms-full.txt\n    schedule: "*/2 * * * * *"\n`,
  );
  const s = await startTestServer({ dataDir, config: { sourcesSchedule: 'off' } });
  try {
    const built = async () => (await s.services.jobs.list({ libraryId: llms, state: 'succeeded' })).length;
    await waitFor(async () => (await built()) >= 2, 30_000, 200);
    assert.ok(s.services.store.libraries.currentVersion(llms, ''));

    fs.rmSync(path.join(dataDir, 'sources.yaml'));
    const r = await reconcile(s);
    assert.equal(r.status, 200);
    assert.equal(r.body.found, false);
    assert.deepEqual(ids(r.body), { created: [], updated: [], unchanged: [], pruned: [], adopted: [], released: [], errors: [] });
    assert.ok(s.services.store.libraries.get(llms), 'a missing file prunes nothing');
  } finally {
    await Promise.all([s.close(), fixtures.close()]);
  }
});
