import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, waitFor, type TestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import type { SearchContextResponse, LibrarySearchEntry, AccessPolicy } from '../server/search/contracts.ts';
import { MultiLibrarySearch } from '../server/search/search-service.ts';
import { retrievePrepared } from '../server/search/retrieve.ts';
import type { SnippetInput } from '../server/model.ts';

/**
 * GET /api/v3/search and GET /api/v2/libs/search over HTTP against the real corpora
 * (fastify current + v4.29.1 + v3.29.5, vite, hono, pino, zod) plus two small libraries built
 * here: /acme/widget (tags 1.4.0 and 2.0.0-beta.1, for prerelease rules) and /acme/site (a website).
 */

let s: TestServer;
const original: { search?: TestServer['services']['search']; access?: AccessPolicy } = {};

function code(id: string, title: string, text: string): SnippetInput {
  return { kind: 'code', sourceId: id, title, description: `${title}: ${text}`, language: 'js', pageTitle: 'widgets', codeList: [{ language: 'js', code: `widget.${title.replace(/\W/g, '')}() // ${text}` }] };
}

async function addLibrary(meta: { id: string; title: string; sourceType: 'repo' | 'website'; branch?: string }, tag: string, marker: string): Promise<void> {
  const build = s.services.writer.begin({ ...meta, description: `${meta.title} test library` }, { tag });
  await build.add([
    code(`https://example.com${meta.id}/${tag || 'main'}#spin`, 'spin the widget', `spins the widget gear ${marker}`),
    code(`https://example.com${meta.id}/${tag || 'main'}#stop`, 'stop the widget', `stops the widget gear ${marker}`),
    { kind: 'info', sourceId: `https://example.com${meta.id}/${tag || 'main'}#intro`, content: `The widget gear turns when spun. Release ${marker}.`, breadcrumb: 'Widgets > Intro' },
  ]);
  build.commit();
}

async function get(path: string, auth: string | null = null): Promise<Response> {
  return s.api(path, { auth });
}

async function search(params: Record<string, string | string[]>): Promise<{ res: Response; body: SearchContextResponse }> {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of Array.isArray(v) ? v : [v]) u.append(k, x);
  if (!u.has('type')) u.set('type', 'json');
  const res = await get(`/api/v3/search?${u}`);
  const body = (await res.json()) as SearchContextResponse;
  return { res, body };
}

function libsOf(body: SearchContextResponse): Set<string> {
  return new Set([...body.codeSnippets, ...body.infoSnippets].map((x) => x.libraryId));
}

function hdr(res: Response): { status: string | null; reason: string | null; version: string | null } {
  return { status: res.headers.get('x-stacks-search-status'), reason: res.headers.get('x-stacks-search-reason'), version: res.headers.get('x-stacks-search-version') };
}

before(async () => {
  s = await startTestServer();
  await loadSearchCorpus(s.services);
  await addLibrary({ id: '/acme/widget', title: 'Widget', sourceType: 'repo' }, '', 'current');
  await addLibrary({ id: '/acme/widget', title: 'Widget', sourceType: 'repo' }, '1.4.0', 'one-four');
  await addLibrary({ id: '/acme/widget', title: 'Widget', sourceType: 'repo' }, '2.0.0-beta.1', 'two-beta');
  await addLibrary({ id: '/acme/site', title: 'Gizmo Site', sourceType: 'website' }, '', 'site');
  await addLibrary({ id: '/acme/sprocket', title: 'Sprocket', sourceType: 'repo', branch: '3.x' }, '', 'three');
  await addLibrary({ id: '/acme/zähler', title: 'Zähler', sourceType: 'repo' }, '', 'umlaut');
  original.search = s.services.search;
  original.access = s.services.access;
});

after(async () => {
  await s.close();
});

describe('parameters', () => {
  test('query is required and limited to 2000 characters; long pasted output is accepted', async () => {
    for (const [params, name] of [
      [{}, 'query'],
      [{ query: '' }, 'query'],
      [{ query: 'x'.repeat(2001) }, 'query'],
    ] as const) {
      const { res, body } = await search(params as Record<string, string>);
      assert.equal(res.status, 400, JSON.stringify(params).slice(0, 80));
      assert.equal((body as unknown as { error: string }).error, 'validation_error');
      assert.match((body as unknown as { message: string }).message, new RegExp(name));
    }
    const pasted = `TypeError: fastify.register is not a function\n${'    at Object.<anonymous> (/app/server.js:12:9)\n'.repeat(45)}`.slice(0, 2000);
    const { res } = await search({ query: pasted, library: 'fastify' });
    assert.equal(res.status, 200);
  });

  test('type, library, version and language violations name the parameter', async () => {
    const cases: [Record<string, string | string[]>, string][] = [
      [{ query: 'plugins', type: 'xml' }, 'type'],
      [{ query: 'plugins', library: ['a', 'b', 'c', 'd', 'e'] }, 'library'],
      [{ query: 'plugins', library: 'x'.repeat(121) }, 'library'],
      [{ query: 'plugins', library: '' }, 'library'],
      [{ query: 'plugins', language: 'x'.repeat(41) }, 'language'],
      [{ query: 'plugins', language: '' }, 'language'],
    ];
    for (const v of ['4.x', 'v1.2.3.4', '1.2.3-rc.1+build', 'abc', 'v', '1..2', 'latest1', 'vv1', '1.2_', '1.2.3-', '1.2.3 rc', 'latest!']) cases.push([{ query: 'plugins', version: v }, 'version']);
    for (const [params, name] of cases) {
      const { res, body } = await search(params);
      const b = body as unknown as { error: string; message: string };
      assert.equal(res.status, 400, `${JSON.stringify(params).slice(0, 100)} -> ${res.status}`);
      assert.equal(b.error, 'validation_error');
      assert.ok(b.message.startsWith(name), `${b.message} names ${name}`);
    }
  });

  test('version pattern edge cases that are valid', async () => {
    for (const v of ['V1_2_3-rc.1', '1.2.3+build.5', 'LATEST', 'latest', 'Latest', 'v4', '4_29', '4.29.1', 'v1.2.3-alpha-1.x']) {
      const { res } = await search({ query: 'register a plugin', library: 'fastify', version: v });
      assert.equal(res.status, 200, v);
    }
  });

  test('library is form style exploded: four values accepted, each answering', async () => {
    const { res, body } = await search({ query: 'how to define routes and plugins', library: ['fastify', 'hono', 'vite', 'pino'] });
    assert.equal(res.status, 200);
    assert.deepEqual([...libsOf(body)].sort(), ['/fastify/fastify', '/honojs/website', '/pinojs/pino', '/vitejs/vite']);
  });

  test('language is a soft preference: accepted, language-neutral documentation is not excluded', async () => {
    const { res, body } = await search({ query: 'install fastify', library: 'fastify', language: 'typescript' });
    assert.equal(res.status, 200);
    assert.ok(body.codeSnippets.length + body.infoSnippets.length > 0);
  });
});

describe('rule 1: several libraries, parallel retrieval, dedupe, global rerank, one bounded response', () => {
  test('two libraries answer in one ranked list; every snippet names its library; no duplicates', async () => {
    const { res, body } = await search({ query: 'define a route handler with a path parameter', library: ['hono', 'fastify'] });
    assert.equal(res.status, 200);
    const libs = libsOf(body);
    assert.deepEqual([...libs].sort(), ['/fastify/fastify', '/honojs/website']);
    const all = [...body.codeSnippets, ...body.infoSnippets];
    assert.ok(all.length <= 25, `bounded: ${all.length}`);
    const tokens = body.codeSnippets.reduce((t, c) => t + c.codeTokens, 0) + body.infoSnippets.reduce((t, c) => t + c.contentTokens, 0);
    assert.ok(tokens <= 6500 + 2000, `token budget: ${tokens}`);
    const keys = [...body.codeSnippets.map((c) => `code ${c.codeList.map((x) => x.code).join('\n')}`), ...body.infoSnippets.map((i) => `info ${i.content}`)];
    assert.equal(new Set(keys).size, keys.length, 'no exact duplicates');
    for (const c of body.codeSnippets) for (const f of ['codeTitle', 'codeDescription', 'codeLanguage', 'codeTokens', 'codeId', 'pageTitle', 'codeList', 'libraryId']) assert.ok(f in c, f);
    for (const i of body.infoSnippets) for (const f of ['content', 'contentTokens', 'libraryId']) assert.ok(f in i, f);
    assert.equal(res.headers.get('x-stacks-search-status'), null);
    assert.equal(res.headers.get('x-stacks-search-version'), null);
    assert.equal('version' in body, false);
  });

  test('a library ID outside ASCII is served and its header value stays valid', async () => {
    const { res, body } = await search({ query: 'spin the widget', library: '/acme/zähler' });
    assert.equal(res.status, 200);
    assert.deepEqual([...libsOf(body)], ['/acme/zähler']);
    assert.equal(res.headers.get('x-stacks-libraries'), '/acme/z%C3%A4hler');
  });

  test('the same library named twice is served once', async () => {
    const { body } = await search({ query: 'register a plugin', library: ['fastify', '/fastify/fastify', 'Fastify'] });
    assert.deepEqual([...libsOf(body)], ['/fastify/fastify']);
  });

  test('text layout: the /v2/context layout with each snippet library shown', async () => {
    const res = await get(`/api/v3/search?query=${encodeURIComponent('create a logger child')}&library=pino&library=fastify`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    const blocks = text.split(`\n\n${'-'.repeat(32)}\n\n`);
    assert.ok(blocks.length > 1);
    for (const b of blocks) {
      assert.match(b, /^### .+/);
      assert.match(b, /\nSource: \S+\nLibrary: \/(pinojs\/pino|fastify\/fastify)\n/);
    }
  });
});

describe('library selection', () => {
  test('fuzzy product names and typos pick the library', async () => {
    for (const [name, id] of [
      ['fastify', '/fastify/fastify'], ['fastfy', '/fastify/fastify'], ['Fastify.js', '/fastify/fastify'], ['vite js', '/vitejs/vite'],
      ['vitejs', '/vitejs/vite'], ['hono', '/honojs/website'], ['honojs', '/honojs/website'], ['pino', '/pinojs/pino'], ['zod', '/colinhacks/zod'],
      ['colinhacks/zod', '/colinhacks/zod'],
    ]) {
      const { res, body } = await search({ query: 'getting started', library: name! });
      assert.equal(res.status, 200, name);
      assert.deepEqual([...libsOf(body)], [id], name);
    }
  });

  test('rule 2: an exact ID that is not indexed, or has nothing to serve, is searched by its product name', async () => {
    let r = await search({ query: 'register a plugin', library: '/someone-else/fastify' });
    assert.equal(r.res.status, 200);
    assert.deepEqual([...libsOf(r.body)], ['/fastify/fastify']);
    // A library row without any served version: nothing to serve.
    const build = s.services.writer.begin({ id: '/mirror/vite', title: 'Vite', description: 'mirror', sourceType: 'repo' });
    build.abort();
    assert.ok(s.services.store.libraries.get('/mirror/vite'));
    r = await search({ query: 'dev server proxy', library: '/mirror/vite' });
    assert.equal(r.res.status, 200);
    assert.deepEqual([...libsOf(r.body)], ['/vitejs/vite']);
  });

  test('without library values: the products the question names, then the documents that match it', async () => {
    let r = await search({ query: 'How do I add a hook in Fastify and validate the body with Zod?' });
    assert.deepEqual([...libsOf(r.body)].sort(), ['/colinhacks/zod', '/fastify/fastify']);
    r = await search({ query: 'configure the vite dev server proxy' });
    assert.deepEqual([...libsOf(r.body)], ['/vitejs/vite']);
    r = await search({ query: 'pino.child bindings' });
    assert.deepEqual([...libsOf(r.body)], ['/pinojs/pino']);
    r = await search({ query: 'z.discriminatedUnion refine superRefine safeParse' });
    assert.equal(r.res.status, 200);
    assert.equal([...r.body.codeSnippets, ...r.body.infoSnippets][0]!.libraryId, '/colinhacks/zod');
  });

  test('the access policy filters every candidate (named, fuzzy or inferred)', async () => {
    s.services.access = {
      canSee: (_p, lib) => lib.id !== '/colinhacks/zod',
      filtersActive: () => true,
      rules: (_p, ids) => ({ global: ['Prefer ESM examples.'], libraries: ids.map((libraryId) => ({ libraryId, libraryOwn: libraryId === '/pinojs/pino' ? ['Use pino v9 APIs.'] : [], libraryTeam: [] })) }),
    };
    try {
      let r = await search({ query: 'parse a schema', library: 'zod' });
      assert.equal(r.res.status, 404);
      r = await search({ query: 'parse a schema', library: '/colinhacks/zod' });
      assert.equal(r.res.status, 404);
      r = await search({ query: 'z.object safeParse with zod' });
      assert.ok(!libsOf(r.body).has('/colinhacks/zod'));
      const libs = await get('/api/v2/libs/search?libraryName=zod&query=schemas');
      assert.equal(libs.status, 404);
      const pino = await get(`/api/v2/libs/search?libraryName=pino&query=logs`);
      assert.equal(((await pino.json()) as { searchFilterApplied: boolean }).searchFilterApplied, true);
      // rules.global and rules.libraries[] go with the answer.
      r = await search({ query: 'child logger', library: ['pino', 'fastify'] });
      assert.deepEqual(r.body.rules?.global, ['Prefer ESM examples.']);
      assert.deepEqual(r.body.rules?.libraries.find((l) => l.libraryId === '/pinojs/pino'), { libraryId: '/pinojs/pino', libraryOwn: ['Use pino v9 APIs.'], libraryTeam: [] });
      const text = await (await get(`/api/v3/search?query=child%20logger&library=pino`)).text();
      assert.match(text, /^### Rules\n\n- Prefer ESM examples\.\n- \/pinojs\/pino: Use pino v9 APIs\./);
    } finally {
      s.services.access = original.access!;
    }
  });
});

describe('versions', () => {
  test('rule 3 and 6: a version tag on a library value resolves semver-aware; snippets carry the served tag', async () => {
    for (const [value, served] of [
      ['/fastify/fastify/v4', 'v4.29.1'], ['/fastify/fastify@4.29', 'v4.29.1'], ['/fastify/fastify@3', 'v3.29.5'], ['fastify@v3.29.5', 'v3.29.5'],
      ['/someone/fastify@4', 'v4.29.1'], ['fastify 3_29', 'v3.29.5'],
    ]) {
      const { res, body } = await search({ query: 'register a plugin', library: value! });
      assert.equal(res.status, 200, value);
      assert.deepEqual([...libsOf(body)], [`/fastify/fastify/${served}`], value);
      assert.deepEqual(body.version, { status: 'verified', libraries: [{ libraryId: `/fastify/fastify/${served}`, requested: value!.split(/[@ ]|\/(?=v?\d)/).pop(), served, status: 'verified' }] }, value);
      assert.deepEqual(hdr(res), { status: null, reason: null, version: 'verified' }, value);
    }
  });

  test('the version parameter: v4 -> newest 4.x, 4.29 -> 4.29.x, _ as separator; requested is echoed', async () => {
    for (const [v, served] of [['v4', 'v4.29.1'], ['4', 'v4.29.1'], ['4.29', 'v4.29.1'], ['4_29_1', 'v4.29.1'], ['V3', 'v3.29.5'], ['3.29.5+build.5', 'v3.29.5']]) {
      const { res, body } = await search({ query: 'register a plugin', library: 'fastify', version: v! });
      assert.equal(res.status, 200);
      assert.equal(body.version?.requested, v);
      assert.equal(body.version?.status, 'verified');
      assert.deepEqual(body.version?.libraries, [{ libraryId: `/fastify/fastify/${served}`, requested: v, served, status: 'verified' }]);
      assert.equal(res.headers.get('x-stacks-search-version'), 'verified');
      assert.equal(res.headers.get('x-stacks-search-status'), null);
    }
  });

  test('rule 4: latest in any case behaves as no version', async () => {
    for (const v of ['latest', 'LATEST', 'Latest']) {
      const { res, body } = await search({ query: 'register a plugin', library: 'fastify', version: v });
      assert.equal('version' in body, false);
      assert.deepEqual(hdr(res), { status: null, reason: null, version: null });
      assert.deepEqual([...libsOf(body)], ['/fastify/fastify']);
    }
    const { body } = await search({ query: 'register a plugin', library: '/fastify/fastify@latest' });
    assert.equal('version' in body, false);
  });

  test('rule 6: one library without the version serves current documentation, partial + versionUnverified', async () => {
    const { res, body } = await search({ query: 'register a plugin', library: 'fastify', version: 'v9' });
    assert.equal(res.status, 200);
    assert.deepEqual(hdr(res), { status: 'partial', reason: 'versionUnverified', version: 'unverified' });
    assert.deepEqual(body.version, { requested: 'v9', status: 'unverified', libraries: [{ libraryId: '/fastify/fastify', requested: 'v9', served: null, status: 'unverified' }] });
    assert.deepEqual([...libsOf(body)], ['/fastify/fastify']);
  });

  test('rule 6: only a prerelease matches a stable request -> versionPrerelease; a prerelease request is verified', async () => {
    let r = await search({ query: 'spin the widget', library: 'widget', version: '2' });
    assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'versionPrerelease', version: 'prerelease' });
    assert.deepEqual(r.body.version?.libraries, [{ libraryId: '/acme/widget/2.0.0-beta.1', requested: '2', served: '2.0.0-beta.1', status: 'prerelease' }]);
    r = await search({ query: 'spin the widget', library: 'widget', version: 'v2.0.0-beta.1' });
    assert.deepEqual(hdr(r.res), { status: null, reason: null, version: 'verified' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget/2.0.0-beta.1']);
    r = await search({ query: 'spin the widget', library: 'widget', version: 'V1_4_0' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget/1.4.0']);
    assert.equal(r.body.version?.status, 'verified');
    // Stable preferred over prerelease inside the range: 1 -> 1.4.0.
    r = await search({ query: 'spin the widget', library: 'widget', version: '1' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget/1.4.0']);
    r = await search({ query: 'spin the widget', library: 'widget', version: 'V1_2_3-rc.1' });
    assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'versionUnverified', version: 'unverified' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget']);
  });

  test('current documentation whose branch is the requested version serves it as verified (served = the request)', async () => {
    let r = await search({ query: 'spin the widget', library: 'sprocket', version: 'v3' });
    assert.deepEqual(r.body.version, { requested: 'v3', status: 'verified', libraries: [{ libraryId: '/acme/sprocket', requested: 'v3', served: 'v3', status: 'verified' }] });
    assert.deepEqual(hdr(r.res), { status: null, reason: null, version: 'verified' });
    r = await search({ query: 'spin the widget', library: 'sprocket', version: '3.1' });
    assert.equal(r.body.version?.status, 'unverified', '3.x does not say which 3.y');
  });

  test('rule 7: several libraries: the version is a preference and each library reports what it served', async () => {
    const { res, body } = await search({ query: 'plugins and configuration', library: ['fastify', 'vite'], version: '4' });
    assert.equal(res.status, 200);
    assert.deepEqual([...libsOf(body)].sort(), ['/fastify/fastify/v4.29.1', '/vitejs/vite']);
    assert.equal(body.version?.status, 'unverified');
    assert.deepEqual(
      [...body.version!.libraries].sort((a, b) => a.libraryId.localeCompare(b.libraryId)),
      [
        { libraryId: '/fastify/fastify/v4.29.1', requested: '4', served: 'v4.29.1', status: 'verified' },
        { libraryId: '/vitejs/vite', requested: '4', served: null, status: 'unverified' },
      ],
    );
    assert.deepEqual(hdr(res), { status: 'partial', reason: 'versionUnverified', version: 'unverified' });
    // A tag on one value applies to that library only; the other asked nothing.
    const r = await search({ query: 'plugins and configuration', library: ['fastify@3', 'vite'] });
    assert.deepEqual(r.body.version, { status: 'verified', libraries: [{ libraryId: '/fastify/fastify/v3.29.5', requested: '3', served: 'v3.29.5', status: 'verified' }] });
    assert.deepEqual(hdr(r.res), { status: null, reason: null, version: 'verified' });
  });

  test('rule 5: without library values the version applies when the question names one product, not several', async () => {
    let r = await search({ query: 'how do I register a plugin in fastify?', version: 'v4' });
    assert.deepEqual([...libsOf(r.body)], ['/fastify/fastify/v4.29.1']);
    assert.equal(r.body.version?.status, 'verified');
    r = await search({ query: 'how do I log requests in fastify with pino?', version: 'v4' });
    assert.deepEqual([...libsOf(r.body)].sort(), ['/fastify/fastify', '/pinojs/pino']);
    assert.equal(r.body.version?.requested, 'v4');
    assert.ok(r.body.version!.libraries.every((l) => l.served === null && l.status === 'unverified'));
    // An ignored version is not a request to index that version.
    const jobs = (await (await s.api('/api/jobs?kind=version-fetch&libraryId=/pinojs/pino')).json()) as { jobs: unknown[] };
    assert.equal(jobs.jobs.length, 0);
  });

  test('rule 8: a missing version of a repo library is queued once as a version-fetch job shown in the job list', async () => {
    const count = async () => ((await (await s.api('/api/jobs?kind=version-fetch&libraryId=/vitejs/vite')).json()) as { jobs: unknown[] }).jobs.length;
    const before = await count();
    await search({ query: 'dev server', library: 'vite', version: '5.1' });
    await search({ query: 'dev server', library: 'vite', version: 'v5.1' });
    await search({ query: 'spin', library: 'gizmo site', version: '7' });
    const jobs = (await waitFor(async () => {
      const list = (await (await s.api('/api/jobs?kind=version-fetch')).json()) as { jobs: { kind: string; libraryId: string; state: string; error: string | null }[] };
      const vite = list.jobs.filter((j) => j.libraryId === '/vitejs/vite');
      return vite.length && vite.every((j) => j.state === 'failed') ? list.jobs : null;
    }))!;
    const vite = jobs.filter((j) => j.libraryId === '/vitejs/vite');
    assert.equal(vite.length, before + 1, 'no duplicate for the same version');
    assert.match(vite[0]!.error ?? '', /no git source/);
    assert.equal(jobs.some((j) => j.libraryId === '/acme/site'), false, 'websites are not fetched by version');
    await search({ query: 'dev server', library: 'vite', version: '5.1.0' });
    const again = (await (await s.api('/api/jobs?kind=version-fetch&libraryId=/vitejs/vite')).json()) as { jobs: unknown[] };
    assert.equal(again.jobs.length, before + 2, 'a different version is a new job');
  });
});

describe('failures', () => {
  test('nothing matched -> 404 no_documentation_found', async () => {
    // (A named library always answers something: its vector neighbours exist for any question.)
    const cases: Record<string, string | string[]>[] = [{ query: 'plugins', library: 'qqqzzzxxx' }, { query: 'plugins', library: ['qqqzzzxxx', 'wwwyyyvvv'] }, { query: 'xylophonequux zebrafoo' }];
    for (const params of cases) {
      const { res, body } = await search(params);
      assert.equal(res.status, 404, JSON.stringify(params));
      assert.equal((body as unknown as { error: string }).error, 'no_documentation_found');
      assert.equal(typeof (body as unknown as { message: string }).message, 'string');
    }
  });

  test('one library failing -> the others answer, partial + partialSearchFailure; all failing -> 503 search_failed', async () => {
    const store = s.services.store;
    s.services.search = new MultiLibrarySearch(() => s.services, {
      retrieve: async (t, q) => {
        if (t.entry.library.id === '/honojs/website') throw new Error('injected failure');
        return retrievePrepared(store, t.version.id, q, { libraryId: t.label });
      },
    });
    try {
      let r = await search({ query: 'define a route', library: ['hono', 'fastify'] });
      assert.equal(r.res.status, 200);
      assert.deepEqual([...libsOf(r.body)], ['/fastify/fastify']);
      assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'partialSearchFailure', version: null });
      r = await search({ query: 'define a route', library: 'hono' });
      assert.equal(r.res.status, 503);
      assert.equal((r.body as unknown as { error: string }).error, 'search_failed');
      // With a version requested the failure still wins the reason; the version header stays.
      r = await search({ query: 'define a route', library: ['hono', 'fastify'], version: '4' });
      assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'partialSearchFailure', version: 'verified' });
    } finally {
      s.services.search = original.search!;
    }
  });

  test('the reranker failing -> fused order, partial + partialSearchFailure', async () => {
    s.services.search = new MultiLibrarySearch(() => s.services, { rerank: () => { throw new Error('injected reranker failure'); } });
    try {
      const r = await search({ query: 'register a plugin', library: ['fastify', 'vite'] });
      assert.equal(r.res.status, 200);
      assert.ok(r.body.codeSnippets.length + r.body.infoSnippets.length > 0);
      assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'partialSearchFailure', version: null });
    } finally {
      s.services.search = original.search!;
    }
  });

  test('a wrong API key is 401 invalid_api_key; no key is fine', async () => {
    const bad = await get('/api/v3/search?query=plugins&library=fastify', 'stk_wrong');
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as { error: string }).error, 'invalid_api_key');
    const withKey = await s.api('/api/v3/search?query=plugins&library=fastify');
    assert.equal(withKey.status, 200);
  });
});

describe('GET /api/v2/libs/search', () => {
  async function libs(libraryName: string, query = 'how do I use it'): Promise<{ status: number; body: { results: LibrarySearchEntry[]; searchFilterApplied: boolean; error?: string } }> {
    const res = await get(`/api/v2/libs/search?libraryName=${encodeURIComponent(libraryName)}&query=${encodeURIComponent(query)}`);
    return { status: res.status, body: (await res.json()) as { results: LibrarySearchEntry[]; searchFilterApplied: boolean } };
  }

  test('returns the spec fields, fuzzy names and exact IDs first', async () => {
    const r = await libs('fastify', 'register plugins');
    assert.equal(r.status, 200);
    assert.equal(r.body.searchFilterApplied, false);
    const f = r.body.results[0]!;
    assert.equal(f.id, '/fastify/fastify');
    assert.deepEqual(Object.keys(f).sort(), ['benchmarkScore', 'branch', 'description', 'id', 'lastUpdateDate', 'source', 'stars', 'state', 'title', 'totalSnippets', 'totalTokens', 'trustScore', 'versions'].sort());
    assert.deepEqual([...f.versions].sort(), ['v3.29.5', 'v4.29.1']);
    assert.equal(f.totalSnippets, 1179);
    assert.equal(f.source, 'https://github.com/fastify/fastify');
    for (const [name, id] of [['fastfy', '/fastify/fastify'], ['next js', null], ['vite', '/vitejs/vite'], ['Vite.js', '/vitejs/vite'], ['hono', '/honojs/website'], ['/pinojs/pino', '/pinojs/pino'], ['zod', '/colinhacks/zod'], ['schema validation', '/colinhacks/zod']] as const) {
      const x = await libs(name);
      if (id === null) assert.equal(x.status, 404, name);
      else assert.equal(x.body.results[0]?.id, id, name);
    }
  });

  test('name match first, then relevance of the documents to the query', async () => {
    // The fastify docs talk about pino a lot, but the name decides.
    const r = await libs('pino', 'fastify logger');
    assert.equal(r.body.results[0]!.id, '/pinojs/pino');
  });

  test('validation and 404 no_libraries_found', async () => {
    for (const path of ['/api/v2/libs/search?query=x', '/api/v2/libs/search?libraryName=x', `/api/v2/libs/search?libraryName=${'x'.repeat(501)}&query=q`, `/api/v2/libs/search?libraryName=x&query=${'q'.repeat(501)}`, '/api/v2/libs/search?libraryName=&query=q']) {
      const res = await get(path);
      assert.equal(res.status, 400, path);
      assert.equal(((await res.json()) as { error: string }).error, 'validation_error');
    }
    const none = await libs('qwertyuiop');
    assert.equal(none.status, 404);
    assert.equal(none.body.error, 'no_libraries_found');
  });
});
