import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from './helpers/server.ts';
import { libsOf, searchSuite } from './helpers/search-api.ts';
import { textSources } from './eval/http.ts';
import type { LibrarySearchEntry } from '../server/search/answer-types.ts';
import { switchableAccess } from './helpers/access.ts';

/**
 * Which libraries answer, over HTTP against the real corpora (test/helpers/search-api.ts): several
 * libraries in one bounded response on GET /api/v3/search, library selection (fuzzy names, inference,
 * access policy), GET /api/v2/libs/search, and one library's question answered alike by both endpoints.
 */

let s: TestServer;
/** The access policy, switched by the test of filtering. */
const policy = switchableAccess();

const { search, get } = searchSuite(
  (server) => {
    s = server;
  },
  { overrides: { access: policy.override } },
);

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
    for (const c of body.codeSnippets)
      for (const f of ['codeTitle', 'codeDescription', 'codeLanguage', 'codeTokens', 'codeId', 'pageTitle', 'codeList', 'libraryId']) assert.ok(f in c, f);
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

describe('library selection by name', () => {
  test('fuzzy product names and typos pick the library', async () => {
    for (const [name, id] of [
      ['fastify', '/fastify/fastify'],
      ['fastfy', '/fastify/fastify'],
      ['Fastify.js', '/fastify/fastify'],
      ['vite js', '/vitejs/vite'],
      ['vitejs', '/vitejs/vite'],
      ['hono', '/honojs/website'],
      ['honojs', '/honojs/website'],
      ['pino', '/pinojs/pino'],
      ['zod', '/colinhacks/zod'],
      ['colinhacks/zod', '/colinhacks/zod'],
      ['zdo', '/colinhacks/zod'],
      ['ozd', '/colinhacks/zod'],
    ]) {
      const { res, body } = await search({ query: 'getting started', library: name! });
      assert.equal(res.status, 200, name);
      assert.deepEqual([...libsOf(body)], [id], name);
    }
  });

  test('a three-letter name matches only exactly or with two letters swapped', async () => {
    for (const name of ['zed', 'zo', 'dzo']) {
      const { res } = await search({ query: 'getting started', library: name });
      assert.equal(res.status, 404, name);
    }
  });

  test('rule 2: an exact ID that is not indexed, or has nothing to serve, is searched by its product name', async () => {
    let r = await search({ query: 'register a plugin', library: '/someone-else/fastify' });
    assert.equal(r.res.status, 200);
    assert.deepEqual([...libsOf(r.body)], ['/fastify/fastify']);
    // A library row without any served version: nothing to serve.
    const build = await s.services.writer.begin({ id: '/mirror/vite', title: 'Vite', description: 'mirror', sourceType: 'repo' });
    await build.abort();
    assert.ok(s.services.store.libraries.get('/mirror/vite'));
    r = await search({ query: 'dev server proxy', library: '/mirror/vite' });
    assert.equal(r.res.status, 200);
    assert.deepEqual([...libsOf(r.body)], ['/vitejs/vite']);
  });
});

describe('library selection without a name, and the access policy', () => {
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
    // A quoted address names its product (the host) and its page (the last segment and fragment).
    const quoted = textSources(
      await (
        await get(`/api/v3/search?type=txt&query=${encodeURIComponent('what does https://fastify.dev/docs/latest/Reference/Server/#trustproxy do?')}`)
      ).text(),
    );
    assert.equal(quoted[0]?.replace(/~\d+$/, ''), 'https://fastify.dev/docs/latest/Reference/Server/#trustproxy');
  });

  test('the access policy filters every candidate (named, fuzzy or inferred)', async () => {
    policy.use({
      canSee: (_p, lib) => lib.id !== '/colinhacks/zod',
      filtersActive: () => true,
      rules: (_p, ids) => ({
        global: ['Prefer ESM examples.'],
        libraries: ids.map((libraryId) => ({ libraryId, libraryOwn: libraryId === '/pinojs/pino' ? ['Use pino v9 APIs.'] : [], libraryTeam: [] })),
      }),
    });
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
      assert.deepEqual(
        r.body.rules?.libraries.find((l) => l.libraryId === '/pinojs/pino'),
        { libraryId: '/pinojs/pino', libraryOwn: ['Use pino v9 APIs.'], libraryTeam: [] },
      );
      const text = await (await get(`/api/v3/search?query=child%20logger&library=pino`)).text();
      assert.match(text, /^### Rules\n\n- Prefer ESM examples\.\n- \/pinojs\/pino: Use pino v9 APIs\./);
    } finally {
      policy.use(null);
    }
  });
});

describe('GET /api/v2/libs/search', () => {
  async function libs(
    libraryName: string,
    query = 'how do I use it',
  ): Promise<{ status: number; body: { results: LibrarySearchEntry[]; searchFilterApplied: boolean; error?: string } }> {
    const res = await get(`/api/v2/libs/search?libraryName=${encodeURIComponent(libraryName)}&query=${encodeURIComponent(query)}`);
    return { status: res.status, body: (await res.json()) as { results: LibrarySearchEntry[]; searchFilterApplied: boolean } };
  }

  test('returns the spec fields, fuzzy names and exact IDs first', async () => {
    const r = await libs('fastify', 'register plugins');
    assert.equal(r.status, 200);
    assert.equal(r.body.searchFilterApplied, false);
    const f = r.body.results[0]!;
    assert.equal(f.id, '/fastify/fastify');
    assert.deepEqual(
      Object.keys(f).sort(),
      [
        'benchmarkScore',
        'branch',
        'description',
        'id',
        'lastUpdateDate',
        'source',
        'stars',
        'state',
        'title',
        'totalSnippets',
        'totalTokens',
        'trustScore',
        'versions',
      ].sort(),
    );
    assert.deepEqual([...f.versions].sort(), ['v3.29.5', 'v4.29.1']);
    assert.equal(f.totalSnippets, 1179);
    assert.equal(f.source, 'https://github.com/fastify/fastify');
    for (const [name, id] of [
      ['fastfy', '/fastify/fastify'],
      ['next js', null],
      ['vite', '/vitejs/vite'],
      ['Vite.js', '/vitejs/vite'],
      ['hono', '/honojs/website'],
      ['/pinojs/pino', '/pinojs/pino'],
      ['zod', '/colinhacks/zod'],
      ['schema validation', '/colinhacks/zod'],
    ] as const) {
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
    for (const path of [
      '/api/v2/libs/search?query=x',
      '/api/v2/libs/search?libraryName=x',
      `/api/v2/libs/search?libraryName=${'x'.repeat(501)}&query=q`,
      `/api/v2/libs/search?libraryName=x&query=${'q'.repeat(501)}`,
      '/api/v2/libs/search?libraryName=&query=q',
    ]) {
      const res = await get(path);
      assert.equal(res.status, 400, path);
      assert.equal(((await res.json()) as { error: string }).error, 'validation_error');
    }
    const none = await libs('qwertyuiop');
    assert.equal(none.status, 404);
    assert.equal(none.body.error, 'no_libraries_found');
  });
});

describe('endpoints agree', () => {
  test('a question about one library gets the same answer from /api/v3/search and /api/v2/context', async () => {
    const sourcesOf = async (path: string) => textSources(await (await get(path)).text());
    for (const [library, query] of [
      ['/fastify/fastify', 'Attach a helper property to every incoming req object'],
      ['/honojs/website', 'createMiddleware with a Variables generic so c.var is typed in the route handler'],
      ['/pinojs/pino', 'redact sensitive fields from the log output'],
      ['/vitejs/vite', 'Host the app under a sub-path like /my-app/ instead of the domain root'],
      ['/colinhacks/zod', 'A field holds one of several object shapes depending on a tag property'],
      ['/pinojs/pino', 'pino log level numeric values'],
    ]) {
      const q = encodeURIComponent(query!);
      const searched = await sourcesOf(`/api/v3/search?query=${q}&library=${encodeURIComponent(library!)}&type=txt`);
      const context = await sourcesOf(`/api/v2/context?query=${q}&libraryId=${encodeURIComponent(library!)}&type=txt`);
      assert.ok(searched.length >= 5, query);
      assert.deepEqual(searched, context, query);
    }
  });

  test('a misspelled word is read as the documents spell it, alike on both endpoints', async () => {
    const sourcesOf = async (path: string) => textSources(await (await get(path)).text()).map((u) => u.replace(/~\d+$/, ''));
    for (const [library, typed, spelled] of [
      ['/fastify/fastify', 'custom serilaizer for a route', 'custom serializer for a route'],
      ['/pinojs/pino', 'redcat sensitive keys', 'redact sensitive keys'],
    ]) {
      const lib = encodeURIComponent(library!);
      const searched = await sourcesOf(`/api/v3/search?query=${encodeURIComponent(typed!)}&library=${lib}&type=txt`);
      assert.deepEqual(searched, await sourcesOf(`/api/v2/context?query=${encodeURIComponent(typed!)}&libraryId=${lib}&type=txt`), typed);
      // The first answer is the one to the question spelled right (the rest may differ: the embedding is the typed question's).
      assert.equal(searched[0], (await sourcesOf(`/api/v3/search?query=${encodeURIComponent(spelled!)}&library=${lib}&type=txt`))[0], typed);
    }
  });
});
