import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from './helpers/server.ts';
import { hdr, libsOf, searchSuite } from './helpers/search-api.ts';
import type { GlobalRerank, LibraryRetrieval } from '../server/search/search-service.ts';
import { byScore, retrievePrepared, type Candidate } from '../server/search/retrieve.ts';
import { sectionOf } from '../server/search/source-url.ts';
import { textBlocks } from './eval/http.ts';
import { rank } from '../server/search/ranker.ts';
import { modelFor } from '../server/search/models.ts';

/**
 * GET /api/v3/search over HTTP against the real corpora (test/helpers/search-api.ts): parameter
 * validation, the per-section diversity of the answer, and failure answers (404, 503, 401, partial
 * results when a library or the reranker fails).
 */

let s: TestServer;
/** Faults the failure tests switch on (the server is built with these seams; off, it answers as usual, retrieving in the request thread). */
const faults: { retrieve?: LibraryRetrieval; rerank?: GlobalRerank } = {};

const { search, get } = searchSuite(
  (server) => {
    s = server;
  },
  {
    overrides: {
      search: {
        retrieve: (t, q) => (faults.retrieve ?? (async () => retrievePrepared(s.services.store, t.version.id, q, { libraryId: t.label })))(t, q),
        rerank: (q, cs) => (faults.rerank ?? (() => rank(q, cs, { modelOf: (v) => modelFor(s.services.store, v) })))(q, cs),
      },
    },
  },
);

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
    for (const v of ['4.x', 'v1.2.3.4', '1.2.3-rc.1+build', 'abc', 'v', '1..2', 'latest1', 'vv1', '1.2_', '1.2.3-', '1.2.3 rc', 'latest!'])
      cases.push([{ query: 'plugins', version: v }, 'version']);
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

describe('answer shape', () => {
  test('a section does not fill the head of the answer: its further snippets yield to another section within the decay', async () => {
    let a: Candidate[] = [];
    let b: Candidate | undefined;
    // Real candidates, fixed scores: three snippets of one kind and section well above one snippet
    // of the same kind from another section.
    faults.rerank = (q, cs) => {
      const ranked = rank(q, cs, { modelOf: (v) => modelFor(s.services.store, v) });
      const groups = new Map<string, Candidate[]>();
      for (const c of ranked) {
        const key = `${c.snippet.kind} ${sectionOf(c.snippet.sourceId)}`;
        groups.set(key, [...(groups.get(key) ?? []), c]);
      }
      a = [...groups.values()].find((g) => g.length >= 3)?.slice(0, 3) ?? [];
      b = ranked.find((c) => a.length > 0 && c.snippet.kind === a[0]!.snippet.kind && sectionOf(c.snippet.sourceId) !== sectionOf(a[0]!.snippet.sourceId));
      const fixed = new Map<Candidate, number>([...a.map((c, i) => [c, 0.9 - i * 0.1] as const), ...(b ? [[b, 0.5] as const] : [])]);
      return ranked.map((c) => ({ ...c, score: fixed.get(c) ?? 0.1 })).sort(byScore);
    };
    try {
      const query = '/api/v3/search?query=register%20a%20plugin%20with%20options&library=fastify';
      const res = await get(`${query}&type=json`);
      assert.equal(res.status, 200);
      assert.equal(a.length, 3, 'the candidates hold a section with three snippets of one kind');
      assert.ok(b, 'and a snippet of that kind from another section');
      const body = (await res.json()) as { codeSnippets: { codeId: string }[]; infoSnippets: { pageId: string }[] };
      // The JSON body lists each kind in rank order.
      const sources = a[0]!.snippet.kind === 'code' ? body.codeSnippets.map((c) => c.codeId) : body.infoSnippets.map((i) => i.pageId);
      const section = sectionOf(a[0]!.snippet.sourceId);
      const ofA = sources.map((u, i) => (sectionOf(u) === section ? i : -1)).filter((i) => i >= 0);
      const ofB = sources.indexOf(b.snippet.sourceId);
      assert.ok(ofA.length >= 2 && ofB >= 0, sources.slice(0, 6).join(' '));
      // 0.9, 0.8 x 0.25, 0.7 x 0.25^2 against 0.5: the section keeps the first place and the other
      // section comes second (with the decay of 0.85 before Nov 28, 0.68 kept the section's second snippet ahead).
      assert.equal(ofA[0], 0, sources.slice(0, 6).join(' '));
      assert.ok(ofB < ofA[1]!, `the other section (${ofB}) before the section's second snippet (${ofA[1]}): ${sources.slice(0, 6).join(' ')}`);
      // The text shows the section once: its later snippets are in its block, the other section is the next block.
      const blocks = textBlocks(await (await get(`${query}&type=txt`)).text());
      const blockOf = (url: string) => blocks.findIndex((urls) => urls.includes(url));
      assert.equal(blockOf(a[0]!.snippet.sourceId), 0);
      assert.equal(blockOf(a[1]!.snippet.sourceId), 0, "the section's second snippet is shown in its first block");
      assert.equal(blocks.filter((urls) => sectionOf(urls[0]!) === section).length, 1);
    } finally {
      delete faults.rerank;
    }
  });
});

describe('failures', () => {
  test('nothing matched -> 404 no_documentation_found', async () => {
    // (A named library always answers something: its vector neighbours exist for any question.)
    const cases: Record<string, string | string[]>[] = [
      { query: 'plugins', library: 'qqqzzzxxx' },
      { query: 'plugins', library: ['qqqzzzxxx', 'wwwyyyvvv'] },
      { query: 'xylophonequux zebrafoo' },
    ];
    for (const params of cases) {
      const { res, body } = await search(params);
      assert.equal(res.status, 404, JSON.stringify(params));
      assert.equal((body as unknown as { error: string }).error, 'no_documentation_found');
      assert.equal(typeof (body as unknown as { message: string }).message, 'string');
    }
  });

  test('one library failing -> the others answer, partial + partialSearchFailure; all failing -> 503 search_failed', async () => {
    const store = s.services.store;
    faults.retrieve = async (t, q) => {
      if (t.entry.library.id === '/honojs/website') throw new Error('injected failure');
      return retrievePrepared(store, t.version.id, q, { libraryId: t.label });
    };
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
      delete faults.retrieve;
      delete faults.rerank;
    }
  });

  test('the reranker failing -> fused order, partial + partialSearchFailure', async () => {
    faults.rerank = () => {
      throw new Error('injected reranker failure');
    };
    try {
      const r = await search({ query: 'register a plugin', library: ['fastify', 'vite'] });
      assert.equal(r.res.status, 200);
      assert.ok(r.body.codeSnippets.length + r.body.infoSnippets.length > 0);
      assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'partialSearchFailure', version: null });
    } finally {
      delete faults.retrieve;
      delete faults.rerank;
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
