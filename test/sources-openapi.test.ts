import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from './helpers/fixtures.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { waitJob, snippetsOf, stagingEntries, postJson, postForm, fixtureBlob } from './helpers/sources.ts';

let s: TestServer;
let fixtures: FixtureServer;

before(async () => {
  fixtures = await startFixtureServer();
  s = await startTestServer();
});
after(async () => {
  await Promise.all([s?.close(), fixtures?.close()]);
});

const expected: Record<string, { title: string; operations: number; tags: number; schemas: number }> = {
  'ory-kratos.openapi.json': { title: 'Ory Identities API', operations: 60, tags: 4, schemas: 191 },
  'uspto.openapi.yaml': { title: 'USPTO Data Set API', operations: 3, tags: 2, schemas: 1 },
  'docker-engine.swagger.yaml': { title: 'Docker Engine API', operations: 108, tags: 15, schemas: 160 },
};

test('OpenAPI 3.0 JSON, 3.0 YAML and Swagger 2.0 by URL: one code snippet per operation, info for tags, auth, schemas', async () => {
  for (const [file, exp] of Object.entries(expected)) {
    const r = await postJson(s, '/api/v2/add/openapi', { openApiUrl: `${fixtures.url}/files/openapi/${file}` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const libraryName = r.body.libraryName as string;
    assert.match(libraryName, /^\/openapi\/127_0_0_1_\d+-files-openapi-/);
    assert.match(r.body.message as string, new RegExp(`${exp.operations} operations`));
    const job = await waitJob(s, r.body.jobId as number);
    assert.equal(job.state, 'succeeded', job.error ?? '');
    const snippets = await snippetsOf(s, libraryName);
    const code = snippets.filter((x) => x.kind === 'code');
    const info = snippets.filter((x) => x.kind === 'info');
    assert.equal(code.length, exp.operations, `${file}: operations`);
    assert.ok(
      code.every((c) => /^(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS|TRACE) \//.test(c.title)),
      'titles are METHOD /path',
    );
    assert.ok(
      code.every(
        (c) =>
          c.codeList.some((e) => e.language === 'bash' && e.code.startsWith('curl')) &&
          c.codeList.some((e) => e.language === 'javascript' && e.code.includes('fetch(')),
      ),
    );
    assert.equal(info.filter((i) => i.content.startsWith('Tag: ')).length, exp.tags, `${file}: tags`);
    assert.equal(info.filter((i) => i.content.startsWith('Schema ')).length, exp.schemas, `${file}: schemas`);
    const lib = s.services.store.libraries.get(libraryName)!;
    assert.equal(lib.title, exp.title);
    assert.equal(lib.sourceType, 'openapi');
  }
  assert.deepEqual(stagingEntries(s), [], 'staged specs are removed after the jobs');
});

test('operation snippets carry parameters, request body examples, auth and a response summary', async () => {
  const lib = `/openapi/${new URL(fixtures.url).host.replace(/[.:]/g, '_')}-files-openapi-ory-kratos.openapi.json`;
  const create = (await snippetsOf(s, lib)).find((x) => x.title === 'POST /admin/identities')!;
  assert.ok(create, 'POST /admin/identities is indexed');
  assert.match(create.description, /Create an Identity/);
  assert.match(create.description, /Request body \(application\/json\)/);
  assert.match(create.description, /- 201 \(application\/json\).*identity \{/);
  const curl = create.codeList.find((c) => c.language === 'bash')!.code;
  assert.match(curl, /^curl -X POST "\$BASE_URL\/admin\/identities"/);
  assert.match(curl, /-H "Authorization: \$API_KEY"/, 'apiKey scheme oryAccessToken in the Authorization header');
  assert.match(curl, /"schema_id": "string"/, 'required properties in the example body');
  assert.ok(create.sourceId.endsWith('#operation/createIdentity'));

  const uspto = await snippetsOf(s, `/openapi/${new URL(fixtures.url).host.replace(/[.:]/g, '_')}-files-openapi-uspto.openapi.yaml`);
  const search = uspto.find((x) => x.title === 'POST /{dataset}/{version}/records')!;
  const usptoCurl = search.codeList.find((c) => c.language === 'bash')!.code;
  assert.match(usptoCurl, /https:\/\/developer\.uspto\.gov\/ds-api\/oa_citations\/v1\/records/, 'templated server URL and path defaults filled in');
  assert.match(usptoCurl, /--data-urlencode 'criteria=\*:\*'/);

  const docker = await snippetsOf(s, `/openapi/${new URL(fixtures.url).host.replace(/[.:]/g, '_')}-files-openapi-docker-engine.swagger.yaml`);
  const list = docker.find((x) => x.title === 'GET /containers/json')!;
  assert.match(list.codeList[0]!.code, /\$BASE_URL\/v1\.56\/containers\/json/, 'Swagger basePath is used');
  assert.ok(
    docker.some((x) => x.kind === 'info' && x.content.startsWith('Tag: Distribution')),
    'undeclared but used tag gets an info snippet',
  );
});

test('the same URL twice is a 409 unless force=true', async () => {
  const body = { openApiUrl: `${fixtures.url}/files/openapi/uspto.openapi.yaml` };
  const again = await postJson(s, '/api/v2/add/openapi', body);
  assert.equal(again.status, 409);
  assert.equal(again.body.error, 'conflict');
  assert.match(again.body.message as string, /already exists.*force=true/);
  const forced = await postJson(s, '/api/v2/add/openapi', { ...body, force: true });
  assert.equal(forced.status, 200);
  const job = await waitJob(s, forced.body.jobId as number);
  assert.equal(job.state, 'succeeded');
  assert.equal((await snippetsOf(s, forced.body.libraryName as string)).filter((x) => x.kind === 'code').length, 3, 'replaced, not duplicated');
});

test('a broken spec is a 400 naming the YAML error, and nothing is created', async () => {
  const libsBefore = s.services.store.libraries.list().length;
  const jobsBefore = (await s.services.jobs.list()).length;
  const r = await postJson(s, '/api/v2/add/openapi', { openApiUrl: `${fixtures.url}/files/openapi/broken.openapi.yaml` });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'validation_error');
  assert.match(r.body.message as string, /broken\.openapi\.yaml: YAML parse error at line 15, column 7: missed comma between flow collection entries/);
  const up = new FormData();
  up.append('openapiFile', fixtureBlob('openapi/broken.openapi.yaml'), 'broken.openapi.yaml');
  const r2 = await postForm(s, '/api/v2/add/openapi-upload', up);
  assert.equal(r2.status, 400);
  assert.match(r2.body.message as string, /line 15, column 7/);
  const notSpec = await postJson(s, '/api/v2/add/openapi', { openApiUrl: `${fixtures.url}/files/bundles/valid.json` });
  assert.equal(notSpec.status, 400);
  assert.match(notSpec.body.message as string, /not an OpenAPI document/);
  const missing = await postJson(s, '/api/v2/add/openapi', { openApiUrl: `${fixtures.url}/files/openapi/nope.yaml` });
  assert.equal(missing.status, 422);
  assert.equal(missing.body.error, 'fetch_failed');
  assert.equal(s.services.store.libraries.list().length, libsBefore);
  assert.equal((await s.services.jobs.list()).length, jobsBefore);
  assert.deepEqual(stagingEntries(s), []);
});

test('input validation, SSRF guard, API key and roles', async () => {
  const noUrl = await postJson(s, '/api/v2/add/openapi', {});
  assert.equal(noUrl.status, 400);
  assert.match(noUrl.body.message as string, /openApiUrl is required/);
  const scheme = await postJson(s, '/api/v2/add/openapi', { openApiUrl: 'file:///etc/passwd' });
  assert.equal(scheme.status, 400);
  const metadata = await postJson(s, '/api/v2/add/openapi', { openApiUrl: 'http://169.254.169.254/latest/meta-data/' });
  assert.equal(metadata.status, 403);
  assert.equal(metadata.body.error, 'forbidden');
  const anon = await postJson(s, '/api/v2/add/openapi', { openApiUrl: `${fixtures.url}/files/openapi/uspto.openapi.yaml` }, null);
  assert.equal(anon.status, 401);
  assert.equal(anon.body.error, 'invalid_api_key');

  const member = await s.services.keys.create({ name: 'member key', memberName: 'dev', role: 'member' });
  const form = new FormData();
  form.append('openapiFile', fixtureBlob('openapi/uspto.openapi.yaml'), 'uspto.openapi.yaml');
  const denied = await postForm(s, '/api/v2/add/openapi-upload', form, member.key);
  assert.equal(denied.status, 403);
  assert.match(denied.body.message as string, /owner or admin/);
});

test('upload: owned by the teamspace, title from libraryTitle, 10 MB limit', async () => {
  const form = new FormData();
  form.append('openapiFile', fixtureBlob('openapi/uspto.openapi.yaml'), 'uspto.openapi.yaml');
  form.append('libraryTitle', 'Patent Data API');
  form.append('description', 'USPTO data sets');
  const r = await postForm(s, '/api/v2/add/openapi-upload', form);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.libraryName, '/openapi/patent-data-api');
  assert.equal((await waitJob(s, r.body.jobId as number)).state, 'succeeded');
  const lib = s.services.store.libraries.get('/openapi/patent-data-api')!;
  assert.equal(lib.title, 'Patent Data API');
  assert.equal(lib.description, 'USPTO data sets');
  assert.equal(lib.teamspaceId, s.services.keys.defaultTeamspaceId());
  assert.equal((await snippetsOf(s, '/openapi/patent-data-api')).filter((x) => x.kind === 'code').length, 3);

  const again = new FormData();
  again.append('openapiFile', fixtureBlob('openapi/uspto.openapi.yaml'), 'uspto.openapi.yaml');
  again.append('libraryTitle', 'Patent Data API');
  assert.equal((await postForm(s, '/api/v2/add/openapi-upload', again)).status, 409);

  // Another teamspace cannot replace this teamspace's library, not even with force.
  const other = await s.services.store.accounts.createTeamspace('other team', 'enterprise', new Date().toISOString());
  const otherAdmin = await s.services.keys.create({ name: 'other admin', memberName: 'other-admin', role: 'admin', teamspaceId: other });
  const steal = new FormData();
  steal.append('openapiFile', fixtureBlob('openapi/uspto.openapi.yaml'), 'uspto.openapi.yaml');
  steal.append('libraryTitle', 'Patent Data API');
  steal.append('force', 'true');
  const stolen = await postForm(s, '/api/v2/add/openapi-upload', steal, otherAdmin.key);
  assert.equal(stolen.status, 409);
  assert.match(stolen.body.message as string, /is taken/);
  assert.equal(s.services.store.libraries.get('/openapi/patent-data-api')!.teamspaceId, s.services.keys.defaultTeamspaceId());

  const big = new FormData();
  big.append('openapiFile', new Blob([Buffer.alloc(10 * 1024 * 1024 + 10, 32)]), 'big.yaml');
  const tooBig = await postForm(s, '/api/v2/add/openapi-upload', big);
  assert.equal(tooBig.status, 413);
  assert.equal(tooBig.body.error, 'payload_too_large');
  const none = await postForm(s, '/api/v2/add/openapi-upload', new FormData());
  assert.equal(none.status, 400);
  assert.match(none.body.message as string, /openapiFile is required/);
});

test('add endpoints need a valid license', async () => {
  const unlicensed = await startTestServer({ license: false });
  try {
    const r = await postJson(unlicensed, '/api/v2/add/openapi', { openApiUrl: `${fixtures.url}/files/openapi/uspto.openapi.yaml` });
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'license_required');
    const l = await postJson(unlicensed, '/api/v2/add/llmstxt', { llmstxtUrl: `${fixtures.url}/files/llmstxt/pagy.llms.txt` });
    assert.equal(l.body.error, 'license_required');
    const f = await postForm(unlicensed, '/api/v2/add/file-upload', new FormData());
    assert.equal(f.body.error, 'license_required');
  } finally {
    await unlicensed.close();
  }
});
