import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqlite } from '../lib/sqlite.ts';
import { migrate } from '../server/store/db.ts';
import { migrations } from '../server/store/migrations/index.ts';
import { runStacks, startTestServer, waitFor, type TestServer } from './helpers/server.ts';
import { startFixtureServer } from './helpers/fixtures.ts';
import { httpMcpClient, loadCorpusBundles, textOf } from './helpers/mcp.ts';

/**
 * Library visibility over every read path, with two teamspaces, a member, a read-scoped key and
 * anonymous callers. The scenario of the issue: a member crawls an internal page; nobody outside
 * its teamspace can read it or learn its name until an owner or admin shares it.
 */

interface Answer {
  status: number;
  body: Record<string, unknown>;
  text: string;
  headers: Headers;
}

async function get(s: TestServer, path: string, auth: string | null): Promise<Answer> {
  const r = await s.api(path, { auth });
  const text = await r.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* a text answer */
  }
  return { status: r.status, body, text, headers: r.headers };
}

async function send(s: TestServer, method: string, path: string, body: unknown, auth: string | null): Promise<Answer> {
  const r = await s.api(path, { method, auth, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown>, text, headers: r.headers };
}

/** The answer with the library's ID replaced, to compare a hidden library with one that never existed. */
function shape(a: Answer, id: string): string {
  const searchHeaders = [...a.headers.entries()].filter(([k]) => k.startsWith('x-stacks-search')).sort();
  return JSON.stringify({ status: a.status, body: a.body, searchHeaders }).split(id).join('<ID>');
}

/** Every read path answers `key` (null: anonymous) about library `id` exactly as about `ghost`, an ID never indexed. */
async function assertHidden(s: TestServer, key: string | null, id: string, ghost: string, question: string): Promise<void> {
  const hidden = await get(s, `/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${question}`, key);
  const missing = await get(s, `/api/v2/context?libraryId=${encodeURIComponent(ghost)}&query=${question}`, key);
  assert.equal(hidden.status, 404);
  assert.equal(shape(hidden, id), shape(missing, ghost));
  const search = await get(s, `/api/v3/search?query=${question}&library=${encodeURIComponent(id)}`, key);
  const searchMissing = await get(s, `/api/v3/search?query=${question}&library=${encodeURIComponent(ghost)}`, key);
  assert.equal(shape(search, id), shape(searchMissing, ghost));
  // A fuzzy name of it is answered as a name nothing carries.
  const fuzzy = await get(s, `/api/v3/search?query=${question}&library=StrictPath`, key);
  const nothing = await get(s, `/api/v3/search?query=${question}&library=Qwertzuiop`, key);
  assert.equal(shape(fuzzy, 'StrictPath'), shape(nothing, 'Qwertzuiop'));
  // Library-less search, the library list, name lookup and the library page never name it.
  const anywhere = await get(s, `/api/v3/search?query=${question}`, key);
  assert.ok(!anywhere.text.includes(id) && !/StrictPath/.test(anywhere.text), anywhere.text.slice(0, 300));
  for (const [k, v] of anywhere.headers) assert.ok(!v.includes(id), `header ${k}`);
  const title = encodeURIComponent('The Complete StrictPath Guide');
  const libs = await get(s, `/api/v2/libs/search?libraryName=${title}&query=${question}`, key);
  assert.ok(!libs.text.includes(id), libs.text);
  assert.ok(!(await get(s, '/api/libraries', key)).text.includes(id));
  assert.equal(shape(await get(s, `/api/libraries${id}`, key), id), shape(await get(s, `/api/libraries${ghost}`, key), ghost));
}

/** Blue's jobs list and MCP tools never show the other teamspace's library; its owner sees the job. */
async function assertJobsAndMcpHidden(s: TestServer, keys: { blue: string; owner: string }, id: string, jobId: number): Promise<void> {
  const { blue, owner } = keys;
  // Jobs of another teamspace are invisible to blue, and answer like missing ones.
  assert.ok(!(await get(s, '/api/jobs?limit=1000', blue)).text.includes(id));
  assert.ok((await get(s, '/api/jobs?limit=1000', owner)).text.includes(id));
  const blueJob = await get(s, `/api/jobs/${jobId}`, blue);
  assert.equal(blueJob.status, 404);
  assert.equal(blueJob.body.error, 'job_not_found');

  // MCP with blue's key: no name, no docs.
  const mcp = await httpMcpClient(s.url, { authorization: `Bearer ${blue}` });
  try {
    const resolved = textOf(await mcp.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'StrictPath Guide', query: 'design decisions' } }));
    assert.ok(!resolved.includes(id), resolved);
    const docs = textOf(await mcp.callTool({ name: 'query-docs', arguments: { libraryId: id, query: 'design decisions' } }));
    assert.ok(!/StrictPath/.test(docs), docs);
  } finally {
    await mcp.close();
  }
}

/** Owners edit a library's title, description and re-crawl schedule; members may not. */
async function assertMetadataEdits(s: TestServer, keys: { owner: string; member: string }, id: string): Promise<void> {
  const edit = { title: 'StrictPath Guide', description: 'The internal copy of the StrictPath guide', schedule: '0 3 * * *' };
  assert.equal((await send(s, 'PATCH', `/api/libraries${id}`, edit, keys.member)).status, 403);
  const edited = await send(s, 'PATCH', `/api/libraries${id}`, edit, keys.owner);
  assert.equal(edited.status, 200, edited.text);
  assert.deepEqual([edited.body.title, edited.body.description, edited.body.schedule], [edit.title, edit.description, edit.schedule]);
  assert.equal((await s.services.crawler.sites()).find((x) => x.libraryId === id)?.schedule, '0 3 * * *');
  const listed = (await get(s, '/api/libraries', keys.owner)).text;
  assert.ok(listed.includes('StrictPath Guide'), 'lists show the new title at once');
  assert.equal((await send(s, 'PATCH', `/api/libraries${id}`, { schedule: 'every day' }, keys.owner)).status, 400);
  assert.equal((await send(s, 'PATCH', `/api/libraries${id}`, {}, keys.owner)).status, 400);
}

test('visibility: a member crawl stays in its teamspace on every read path until an admin shares it', async (t) => {
  const site = await startFixtureServer();
  t.after(() => site.close());
  const s = await startTestServer();
  t.after(() => s.close());
  await loadCorpusBundles(s.services, ['pino']);
  const owner = s.key;
  const member = (await s.services.keys.create({ name: 'mia laptop', memberName: 'mia', role: 'member' })).key;
  const reader = (await s.services.keys.create({ name: 'assistant', memberName: 'mia', scope: 'read' })).key;
  const blue = (await s.services.teams.teamspaces.create({ name: 'blue', owner: 'bea' })).key.key;

  // A member crawls an internal page (loopback is allowed: internal sites are the point).
  const added = await send(s, 'POST', '/api/v2/add/website', { websiteUrl: `${site.url}/static/design_decisions.html` }, member);
  assert.equal(added.status, 200, added.text);
  const id = added.body.libraryName as string;
  const jobId = Number(/job (\d+)/.exec(added.body.message as string)?.[1]);
  await waitFor(async () => {
    const j = await get(s, `/api/jobs/${jobId}`, member);
    assert.ok(['queued', 'running', 'succeeded'].includes(j.body.state as string), j.text);
    return j.body.state === 'succeeded' ? j : null;
  }, 60_000);
  const ghost = id.replace(/[^/]+$/, 'never-indexed-site');
  const question = encodeURIComponent('StrictPath design decisions security crate');

  // Its teamspace reads it: the member, the read-scoped key and the owner.
  for (const key of [member, reader, owner]) {
    const ctx = await get(s, `/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${question}`, key);
    assert.equal(ctx.status, 200, ctx.text);
    assert.match(ctx.text, /StrictPath/);
  }
  const view = await get(s, `/api/libraries${id}`, member);
  assert.equal(view.status, 200, view.text);
  assert.equal(view.body.visibility, 'teamspace');
  assert.equal(view.body.teamspace, 'default');

  // Anonymous callers and another teamspace: exactly as if it did not exist.
  for (const key of [null, blue]) await assertHidden(s, key, id, ghost, question);

  await assertJobsAndMcpHidden(s, { blue, owner }, id, jobId);

  await assertMetadataEdits(s, { owner, member }, id);

  // Only an owner or admin of the owner teamspace may share it; to everyone else it is missing.
  assert.equal((await send(s, 'PATCH', `/api/libraries${id}`, { visibility: 'instance' }, member)).status, 403);
  assert.equal((await send(s, 'PATCH', `/api/libraries${id}`, { visibility: 'instance' }, reader)).status, 403);
  const bluePatch = await send(s, 'PATCH', `/api/libraries${id}`, { visibility: 'instance' }, blue);
  assert.equal(bluePatch.status, 404);
  assert.equal(bluePatch.body.error, 'library_not_found');
  const badGrant = await send(s, 'PATCH', `/api/libraries${id}`, { grants: ['no-such-team'] }, owner);
  assert.equal(badGrant.status, 400);
  assert.match(badGrant.body.message as string, /no-such-team/);
  // A member may not publish a new library to the whole instance either.
  const memberPublic = await send(s, 'POST', '/api/v2/add/website', { websiteUrl: `${site.url}/static/best_practices.html`, visibility: 'instance' }, member);
  assert.equal(memberPublic.status, 403);

  // Granted to blue: blue reads it, anonymous callers still do not.
  const granted = await send(s, 'PATCH', `/api/libraries/${encodeURIComponent(id)}`, { grants: ['blue'] }, owner);
  assert.equal(granted.status, 200, granted.text);
  assert.deepEqual(granted.body.grants, ['blue']);
  assert.equal((await get(s, `/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${question}`, blue)).status, 200);
  assert.equal((await get(s, `/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${question}`, null)).status, 404);
  // Blue sees it but does not own it: it may not change who reads it, and is not shown the grants.
  assert.equal((await send(s, 'PATCH', `/api/libraries${id}`, { visibility: 'instance' }, blue)).status, 403);
  assert.equal((await get(s, `/api/libraries${id}`, blue)).body.grants, undefined);

  // The local operator makes it instance-wide with the CLI, on the data dir the server is serving.
  const set = await runStacks(['libraries', 'set', id, '--visibility', 'instance', '--grants', '', '--data-dir', s.dataDir, '--json']);
  assert.equal(set.code, 0, set.stderr);
  assert.equal((JSON.parse(set.stdout) as { visibility: string }).visibility, 'instance');
  const open = await waitFor(async () => {
    const r = await get(s, `/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${question}`, null);
    return r.status === 200 ? r : null;
  }, 5_000);
  assert.match(open!.text, /StrictPath/);
  const list = await runStacks(['libraries', 'list', '--data-dir', s.dataDir, '--json']);
  const row = (JSON.parse(list.stdout) as { id: string; visibility: string; teamspace: string }[]).find((r) => r.id === id);
  assert.deepEqual([row?.visibility, row?.teamspace], ['instance', 'default']);
});

test("visibility: an owner's import is owned by its teamspace and instance-wide unless kept to it; another teamspace cannot overwrite", async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const blue = (await s.services.teams.teamspaces.create({ name: 'blue', owner: 'bea' })).key.key;
  const bundle = (project: string) =>
    JSON.stringify({
      libraries: [
        {
          project,
          title: 'Internal Billing',
          description: 'Internal billing service',
          codeSnippets: [
            {
              id: 'https://billing.internal/charge',
              title: 'Charge a card',
              description: 'Charge a saved card with the billing client',
              language: 'js',
              codeList: [{ language: 'js', code: 'billing.charge(card, 100)' }],
            },
          ],
          infoSnippets: [{ id: 'https://billing.internal/cards', content: 'A card is charged once per invoice; failed charges are retried daily.' }],
        },
      ],
    });
  const post = async (body: string, auth: string, query = '') => {
    const r = await s.api(`/api/import-libraries${query}`, { method: 'POST', auth, headers: { 'content-type': 'application/json' }, body });
    return { status: r.status, body: (await r.json()) as { libraries?: { libraryId: string; state: string; reason?: string }[] } & Record<string, unknown> };
  };
  const settle = () =>
    waitFor(
      async () => ((await s.services.jobs.list({ state: 'queued' })).length + (await s.services.jobs.list({ state: 'running' })).length === 0 ? true : null),
      30_000,
    );

  const first = await post(bundle('/acme/billing'), s.key, '?visibility=teamspace');
  assert.equal(first.status, 200, JSON.stringify(first.body));
  await settle();
  const q = `/api/v2/context?libraryId=/acme/billing&query=${encodeURIComponent('charge a card')}`;
  assert.equal((await get(s, q, s.key)).status, 200);
  assert.equal((await get(s, q, null)).status, 404, 'kept to the teamspace: anonymous callers do not see it');
  assert.equal((await get(s, q, blue)).status, 404);

  // Blue cannot take the ID over, with or without force.
  const taken = await post(bundle('/acme/billing'), blue, '?force=true');
  assert.equal(taken.status, 200);
  assert.match(JSON.stringify(taken.body), /taken by another teamspace/);
  assert.equal((await get(s, q, blue)).status, 404);

  // By default an owner's (or admin's) import is instance-wide, owned by its teamspace.
  const open = await post(bundle('/acme/public-billing'), s.key);
  assert.equal(open.status, 200, JSON.stringify(open.body));
  await settle();
  assert.equal((await get(s, `/api/v2/context?libraryId=/acme/public-billing&query=${encodeURIComponent('charge a card')}`, null)).status, 200);
  assert.deepEqual(
    [s.services.store.libraries.get('/acme/public-billing')?.visibility, s.services.store.libraries.get('/acme/public-billing')?.teamspaceId],
    ['instance', s.services.teams.defaultTeamspaceId()],
  );
  const invalid = await post(bundle('/acme/x'), s.key, '?visibility=everyone');
  assert.equal(invalid.status, 400);
  assert.equal(invalid.body.error, 'validation_error');
});

test('visibility: the upgrade keeps every library readable by whoever read it before', () => {
  const db = openSqlite(':memory:');
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  // The schema as it was before migration 012, with a public and a teamspace-owned library.
  for (const m of migrations.filter((x) => x.version < 12)) {
    m.up(db);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 'then');
  }
  const now = new Date().toISOString();
  db.prepare("INSERT INTO teamspaces (name, created_at) VALUES ('default', ?), ('blue', ?)").run(now, now);
  const lib = db.prepare("INSERT INTO libraries (id, title, source_type, teamspace_id, created_at, updated_at) VALUES (?, ?, 'repo', ?, ?, ?)");
  lib.run('/acme/public', 'Public', null, now, now);
  lib.run('/blue/private', 'Private', 2, now, now);
  db.prepare("INSERT INTO jobs (kind, state, library_id, created_at, updated_at) VALUES ('import', 'succeeded', '/blue/private', ?, ?)").run(now, now);
  migrate(db);
  const rows = db.prepare('SELECT id, teamspace_id AS owner, visibility FROM libraries ORDER BY id').all();
  assert.deepEqual(rows, [
    { id: '/acme/public', owner: 1, visibility: 'instance' },
    { id: '/blue/private', owner: 2, visibility: 'teamspace' },
  ]);
  assert.deepEqual(db.prepare('SELECT teamspace_id AS t FROM jobs').all(), [{ t: 2 }]);
  db.close();
});
