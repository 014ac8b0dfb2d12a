import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { switchableAccess } from './helpers/access.ts';
import { bundlePath, loadBundleFile } from './eval/bundles.ts';
import type { ContextResponse, CodeSnippetJson, InfoSnippetJson, AccessPolicy } from '../server/search/answer-types.ts';
import { prepareQuery } from '../server/search/query.ts';
import { answerForVersion } from '../server/search/pipeline.ts';
import { attachContext } from '../server/search/neighbours.ts';
import type { Candidate } from '../server/search/retrieve.ts';

let s: TestServer;
const SEP = `\n\n${'-'.repeat(32)}\n\n`;
const F = '/fastify/fastify';

/** The access policy, switched by the tests of rules and hiding. */
const policy = switchableAccess();

before(async () => {
  s = await startTestServer({ overrides: { access: policy.override } });
  await loadBundleFile(s.services.writer, bundlePath('fastify'));
  await loadBundleFile(s.services.writer, bundlePath('fastify-v4.29.1'));
  // A tiny library whose whole answer is known, to check the text layout byte for byte.
  const b = await s.services.writer.begin({ id: '/acme/tiny', title: 'Tiny', description: '', sourceType: 'repo' });
  await b.add([
    {
      kind: 'code',
      sourceId: 'https://tiny.example/docs/widgets#make-widget',
      title: 'Make a widget',
      description: 'Creates a widget with makeWidget.',
      language: 'js',
      pageTitle: 'Widgets',
      breadcrumb: 'Widgets > Make',
      codeList: [
        { language: 'js', code: "makeWidget('blue')" },
        { language: 'ts', code: "makeWidget<'blue'>('blue')\n" },
      ],
    },
    {
      kind: 'info',
      sourceId: 'https://tiny.example/docs/widgets#about',
      content: 'Widgets are blue gadgets you make with makeWidget.',
      breadcrumb: 'Widgets > About',
      pageTitle: 'Widgets',
    },
  ]);
  await b.commit();
  // A guide whose section links to the server page's section (see the link-following test).
  const linked = await s.services.writer.begin({ id: '/acme/linked', title: 'Linked', description: '', sourceType: 'repo' });
  await linked.add([
    {
      kind: 'info',
      sourceId: 'https://linked.example/docs/guide#uploads',
      content: 'Uploads over a megabyte are refused; raise [`bodyLimit`](./Server.md#bodylimit) to accept them.',
      breadcrumb: 'Uploads',
      pageTitle: 'Guide',
    },
    ...['a', 'b', 'c', 'd', 'e'].map((x) => ({
      kind: 'info' as const,
      sourceId: `https://linked.example/docs/guide#${x}`,
      content: `Section ${x} of the guide.`,
      breadcrumb: `Part ${x}`,
      pageTitle: 'Guide',
    })),
    {
      kind: 'info',
      sourceId: 'https://linked.example/docs/server#bodylimit',
      content: 'Defines the maximum payload, in bytes, the server accepts.',
      breadcrumb: 'bodyLimit',
      pageTitle: 'Server',
    },
  ]);
  await linked.commit();
});

after(async () => {
  await s?.close();
});

function ctx(params: Record<string, string>, init?: { auth?: string | null }): Promise<Response> {
  return s.api(`/api/v2/context?${new URLSearchParams(params)}`, { auth: init?.auth === undefined ? null : init.auth });
}

function codeBlock(c: CodeSnippetJson): string {
  const parts = [`### ${c.codeTitle}`, `Source: ${c.codeId}`];
  if (c.codeDescription.trim()) parts.push(c.codeDescription.trim());
  for (const ex of c.codeList) parts.push(`\`\`\`${ex.language}\n${ex.code.replace(/\n+$/, '')}\n\`\`\``);
  return parts.join('\n\n');
}

function infoBlock(i: InfoSnippetJson): string {
  return [`### ${i.breadcrumb}`, `Source: ${i.pageId}`, i.content.trim()].join('\n\n');
}

test('txt layout of a known answer, byte for byte', async () => {
  const res = await ctx({ libraryId: '/acme/tiny', query: 'how do I make a widget' });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await res.text();
  const code = [
    '### Make a widget',
    '',
    'Source: https://tiny.example/docs/widgets#make-widget',
    '',
    'Creates a widget with makeWidget.',
    '',
    '```js',
    "makeWidget('blue')",
    '```',
    '',
    '```ts',
    "makeWidget<'blue'>('blue')",
    '```',
  ].join('\n');
  const info = ['### Widgets > About', '', 'Source: https://tiny.example/docs/widgets#about', '', 'Widgets are blue gadgets you make with makeWidget.'].join(
    '\n',
  );
  // Both snippets are returned; which comes first is the ranker's business.
  assert.ok(text === code + SEP + info || text === info + SEP + code, `unexpected text:\n${text}`);
});

test('rules come first in text and as `rules` in JSON', async () => {
  const original = policy.real();
  const withRules: AccessPolicy = {
    canSee: (p, lib) => original.canSee(p, lib),
    filtersActive: (p) => original.filtersActive(p),
    rules: (_p, ids) => ({
      global: ['Prefer async handlers.'],
      libraries: ids.map((libraryId) => ({ libraryId, libraryOwn: ['Never mutate widgets.'], libraryTeam: [] })),
    }),
  };
  policy.use(withRules);
  try {
    const text = await (await ctx({ libraryId: '/acme/tiny', query: 'make widget' })).text();
    const blocks = text.split(SEP);
    assert.equal(blocks[0], '### Rules\n\n- Prefer async handlers.\n- Never mutate widgets.');
    assert.equal(blocks.length, 3);
    const json = (await (await ctx({ libraryId: '/acme/tiny', query: 'make widget', type: 'json' })).json()) as ContextResponse;
    assert.deepEqual(json.rules, { global: ['Prefer async handlers.'], libraryOwn: ['Never mutate widgets.'], libraryTeam: [] });
  } finally {
    policy.use(null);
  }
});

test('json layout: both arrays, exact field sets, and the txt body renders the same snippets', async () => {
  const params = { libraryId: F, query: 'How do I set a custom error handler with setErrorHandler?' };
  const res = await ctx({ ...params, type: 'json' });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(res.headers.get('x-stacks-library'), F);
  assert.equal(res.headers.get('x-stacks-library-version'), 'current');
  assert.equal(res.headers.get('x-stacks-search-status'), null);
  const json = (await res.json()) as ContextResponse;
  assert.deepEqual(Object.keys(json).sort(), ['codeSnippets', 'infoSnippets']);
  assert.ok(json.codeSnippets.length > 0 && json.infoSnippets.length > 0);
  for (const c of json.codeSnippets) {
    assert.deepEqual(Object.keys(c).sort(), ['codeDescription', 'codeId', 'codeLanguage', 'codeList', 'codeTitle', 'codeTokens', 'pageTitle']);
    assert.ok(Number.isInteger(c.codeTokens) && c.codeTokens > 0);
    assert.ok(c.codeId.startsWith('https://fastify.dev/docs/latest/'));
    for (const ex of c.codeList) assert.deepEqual(Object.keys(ex).sort(), ['code', 'language']);
  }
  for (const i of json.infoSnippets) {
    assert.deepEqual(Object.keys(i).sort(), ['breadcrumb', 'content', 'contentTokens', 'pageId']);
    assert.ok(Number.isInteger(i.contentTokens));
  }
  // The budget bounds the answer.
  const tokens = json.codeSnippets.reduce((n, c) => n + c.codeTokens, 0) + json.infoSnippets.reduce((n, i) => n + i.contentTokens, 0);
  assert.ok(tokens <= 5000 + Math.max(...json.codeSnippets.map((c) => c.codeTokens), ...json.infoSnippets.map((i) => i.contentTokens)));
  // The best answer is the setErrorHandler documentation.
  const top = [...json.codeSnippets.slice(0, 2).map((c) => c.codeId), ...json.infoSnippets.slice(0, 2).map((i) => i.pageId)];
  assert.ok(
    top.some((u) => /seterrorhandler|custom-error-handler/i.test(u ?? '')),
    top.join('\n'),
  );

  const text = await (await ctx(params)).text();
  // Each block is a hit, then the context pulled in for it: `Context: url` and that snippet's body.
  const bodyOf = (block: string) => block.split('\n\n').slice(2).join('\n\n');
  const snippets: { url: string; rendered: string }[] = [];
  for (const block of text.split(SEP)) {
    const [hit, ...context] = block.split(/\n\nContext: (\S+)\n\n/);
    snippets.push({ url: hit!.split('\n')[2]!.replace('Source: ', ''), rendered: hit! });
    for (let k = 0; k < context.length; k += 2) snippets.push({ url: context[k]!, rendered: context[k + 1]! });
  }
  const rendered = [
    ...json.codeSnippets.map((c) => ({ kind: 'code', url: c.codeId, block: codeBlock(c) })),
    ...json.infoSnippets.map((i) => ({ kind: 'info', url: i.pageId, block: infoBlock(i) })),
  ];
  assert.equal(snippets.length, rendered.length, 'the text holds exactly the snippets of the JSON');
  const kinds = snippets.map((sn) => {
    // Context code may leave out a description its hit's prose already holds.
    const match = rendered.find(
      (r) =>
        r.url === sn.url &&
        (r.block === sn.rendered || bodyOf(r.block) === sn.rendered || (r.kind === 'code' && bodyOf(r.block).endsWith(`\n\n${sn.rendered}`))),
    );
    assert.ok(match, `text snippet not in JSON:\n${sn.rendered}`);
    return match.kind;
  });
  assert.ok(text.split(SEP).length >= 5, 'five hits, whatever context they carry');
  assert.ok(snippets.length > text.split(SEP).length, "some hit carries context (this question's best prose brings its code)");
  // Within each kind, text order is JSON order.
  assert.deepEqual(
    snippets.filter((_, k) => kinds[k] === 'code').map((sn) => sn.url),
    json.codeSnippets.map((c) => c.codeId),
  );
});

test('nothing matched: empty arrays in JSON, a one-line text', async () => {
  const json = (await (await ctx({ libraryId: '/acme/tiny', query: 'zzqx kubernetes helm', type: 'json' })).json()) as ContextResponse;
  assert.deepEqual(json, { codeSnippets: [], infoSnippets: [] });
  const text = await (await ctx({ libraryId: '/acme/tiny', query: 'zzqx kubernetes helm' })).text();
  assert.match(text, /No documentation in \/acme\/tiny matched/);
});

test('fast=true serves the fused order, fast=false the reranked pipeline', async () => {
  const query = 'How do I register a plugin with a prefix?';
  const v = s.services.store.libraries.currentVersion(F, '')!;
  const q = await prepareQuery(query, s.services.embedder);
  const pipeline = (fast: boolean) => answerForVersion(s.services.store, q, { versionId: v.id, libraryId: F }, { fast }).map((c) => c.snippet);
  const fastList = pipeline(true);
  const slowList = pipeline(false);
  assert.notDeepEqual(
    fastList.map((x) => x.id),
    slowList.map((x) => x.id),
    'the reranker changes the answer for this question',
  );
  for (const [fast, list] of [
    ['true', fastList],
    ['false', slowList],
  ] as const) {
    const json = (await (await ctx({ libraryId: F, query, type: 'json', fast })).json()) as ContextResponse;
    assert.deepEqual(
      json.codeSnippets.map((c) => c.codeId),
      list.filter((x) => x.kind === 'code').map((x) => x.sourceId),
      `fast=${fast}`,
    );
    assert.deepEqual(
      json.infoSnippets.map((i) => i.pageId),
      list.filter((x) => x.kind === 'info').map((x) => x.sourceId),
      `fast=${fast}`,
    );
  }
  const reranked = (await (await ctx({ libraryId: F, query, type: 'json' })).json()) as ContextResponse;
  const urls = [...reranked.codeSnippets.map((c) => c.codeId), ...reranked.infoSnippets.map((i) => i.pageId)];
  assert.ok(
    urls.slice(0, 6).some((u) => /register|prefix/i.test(u ?? '')),
    urls.join('\n'),
  );
});

test('a hit that links to a section ranked past the first five brings that section into its block', () => {
  const store = s.services.store;
  const v = store.libraries.currentVersion('/acme/linked', '')!;
  const byUrl = new Map(
    store.snippets
      .byIds([...store.search.page(v.id, 'https://linked.example/docs/guide'), ...store.search.page(v.id, 'https://linked.example/docs/server')])
      .map((x) => [x.sourceId.split('#')[1]!, x]),
  );
  const ranked = (order: string[]): Candidate[] =>
    order.map((anchor, i) => ({
      snippet: byUrl.get(anchor)!,
      libraryId: '/acme/linked',
      bm25: null,
      lexical: 0,
      cosine: 0,
      similarity: null,
      lexicalRank: null,
      vectorRank: null,
      fused: 0,
      score: 1 - i / 10,
    }));
  const shown = (list: Candidate[]) => list.map((c) => `${c.snippet.sourceId.split('#')[1]}${c.via ? `(${c.via})` : ''}`);
  assert.deepEqual(shown(attachContext(store, ranked(['uploads', 'a', 'b', 'c', 'd', 'e', 'bodylimit']))), [
    'uploads',
    'bodylimit(link)',
    'a',
    'b',
    'c',
    'd',
    'e',
  ]);
  // Among the first five it is in view already and keeps its place.
  assert.deepEqual(shown(attachContext(store, ranked(['uploads', 'a', 'bodylimit', 'b', 'c', 'd', 'e']))), ['uploads', 'a', 'bodylimit', 'b', 'c', 'd', 'e']);
  // Only the first three hits bring context.
  assert.deepEqual(shown(attachContext(store, ranked(['a', 'b', 'c', 'uploads', 'd', 'e', 'bodylimit']))), ['a', 'b', 'c', 'uploads', 'd', 'e', 'bodylimit']);
});

test('versions via / and @, semver ranges, and an unindexed version served as current with headers', async () => {
  const served = async (libraryId: string) => {
    const res = await ctx({ libraryId, query: 'reply.redirect status code', type: 'json' });
    assert.equal(res.status, 200, libraryId);
    const json = (await res.json()) as ContextResponse;
    const urls = [...json.codeSnippets.map((c) => c.codeId), ...json.infoSnippets.map((i) => i.pageId ?? '')];
    assert.ok(urls.length > 0);
    return { res, urls };
  };
  for (const id of [`${F}/v4.29.1`, `${F}@v4.29.1`, `${F}@4.29.1`, `${F}@v4`, `${F}/4.29`]) {
    const { res, urls } = await served(id);
    assert.ok(
      urls.every((u) => u.includes('/blob/v4.29.1/')),
      `${id}: ${urls[0]}`,
    );
    assert.equal(res.headers.get('x-stacks-search-version'), 'verified', id);
    assert.equal(res.headers.get('x-stacks-search-status'), null, id);
    assert.equal(res.headers.get('x-stacks-library-version'), 'v4.29.1');
  }
  const current = await served(F);
  assert.ok(current.urls.every((u) => u.startsWith('https://fastify.dev/docs/latest/')));
  assert.equal(current.res.headers.get('x-stacks-search-version'), null);
  for (const id of [`${F}@v3.29.5`, `${F}/9`]) {
    const { res, urls } = await served(id);
    assert.ok(
      urls.every((u) => u.startsWith('https://fastify.dev/docs/latest/')),
      id,
    );
    assert.equal(res.headers.get('x-stacks-search-status'), 'partial');
    assert.equal(res.headers.get('x-stacks-search-reason'), 'versionUnverified');
    assert.equal(res.headers.get('x-stacks-search-version'), 'unverified');
  }
  // An imported library has no repository to fetch a missing version from: nothing is queued.
  await s.services.versions.settled();
  assert.deepEqual(await s.services.jobs.list({ kind: 'version-fetch', libraryId: F, limit: 50 }), []);
  // `latest` is no version request at all.
  const latest = await served(`${F}@latest`);
  assert.equal(latest.res.headers.get('x-stacks-search-version'), null);
});

test('errors: invalid_library_id, validation_error naming the parameter, library_not_found, invalid_api_key', async () => {
  const expectError = async (res: Response, status: number, code: string, mention?: string) => {
    assert.equal(res.status, status);
    const body = (await res.json()) as { error: string; message: string };
    assert.equal(body.error, code);
    assert.equal(typeof body.message, 'string');
    if (mention) assert.match(body.message, new RegExp(mention));
  };
  await expectError(await ctx({ libraryId: 'fastify', query: 'x' }), 400, 'invalid_library_id');
  await expectError(await ctx({ libraryId: '/fastify', query: 'x' }), 400, 'invalid_library_id');
  await expectError(await ctx({ libraryId: '/a/b/c/d', query: 'x' }), 400, 'invalid_library_id');
  await expectError(await ctx({ libraryId: F }), 400, 'validation_error', 'query');
  await expectError(await ctx({ libraryId: F, query: '' }), 400, 'validation_error', 'query');
  await expectError(await ctx({ libraryId: F, query: 'x'.repeat(501) }), 400, 'validation_error', 'query');
  assert.equal((await ctx({ libraryId: F, query: 'x'.repeat(500) })).status, 200);
  await expectError(await ctx({ query: 'x' }), 400, 'validation_error', 'libraryId');
  await expectError(await ctx({ libraryId: `/a/${'b'.repeat(500)}`, query: 'x' }), 400, 'validation_error', 'libraryId');
  await expectError(await ctx({ libraryId: F, query: 'x', type: 'xml' }), 400, 'validation_error', 'type');
  await expectError(await ctx({ libraryId: F, query: 'x', fast: 'yes' }), 400, 'validation_error', 'fast');
  await expectError(await ctx({ libraryId: F, query: 'x', researchMode: '1' }), 400, 'validation_error', 'researchMode');
  await expectError(await ctx({ libraryId: '/nope/nothing', query: 'x' }), 404, 'library_not_found');
  await expectError(await ctx({ libraryId: F, query: 'x', researchMode: 'true' }), 401, 'invalid_api_key');
  await expectError(await ctx({ libraryId: F, query: 'x' }, { auth: 'stk_not_a_real_key' }), 401, 'invalid_api_key');

  // A library the caller's policy hides is indistinguishable from a missing one.
  const original = policy.real();
  policy.use({ canSee: (_p, lib) => lib.id !== '/acme/tiny', filtersActive: () => true, rules: (p, ids) => original.rules(p, ids) });
  try {
    await expectError(await ctx({ libraryId: '/acme/tiny', query: 'widget' }), 404, 'library_not_found');
  } finally {
    policy.use(null);
  }
  // FTS5 syntax in a question is inert (every piece of user text is quoted).
  for (const query of ['fastify" OR NEAR(a b) title:x * -y ^z', '"unbalanced', 'AND OR NOT', '{title}: (x)', '***', '"" ""']) {
    assert.equal((await ctx({ libraryId: F, query })).status, 200, query);
  }
  // Words that are also Object.prototype members are plain words.
  assert.equal((await ctx({ libraryId: F, query: 'constructor toString __proto__ hasOwnProperty' })).status, 200);
  // IDs are matched case-insensitively.
  assert.equal((await ctx({ libraryId: '/Fastify/Fastify', query: 'hooks' })).status, 200);
});
