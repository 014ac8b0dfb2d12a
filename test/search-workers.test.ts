import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import type { SearchContextResponse } from '../server/search/answer-types.ts';
import { MultiLibrarySearch } from '../server/search/search-service.ts';
import type { StoreContextService } from '../server/search/context-service.ts';

/**
 * GET /api/v3/search with retrieval worker threads (STACKS_SEARCH_WORKERS=2): the candidates are
 * retrieved on a worker (its own read-only connection and snapshot) and the answer must be the
 * one the request thread computes on its own, for one library and for several, and for a question
 * that names no library (its library probe also runs on a worker).
 */

let s: TestServer;

before(async () => {
  s = await startTestServer({ config: { searchWorkers: 2 } });
  await loadSearchCorpus(s.services, ['fastify', 'pino', 'zod', 'hono']);
});

after(async () => {
  await s?.close();
});

const cases: { query: string; libraries: string[] }[] = [
  { query: 'How do I register a plugin?', libraries: ['/fastify/fastify'] },
  { query: 'create a child logger with bindings', libraries: ['/pinojs/pino', '/fastify/fastify'] },
  { query: 'validate an object schema and parse errors', libraries: ['/colinhacks/zod', '/honojs/hono', '/fastify/fastify', '/pinojs/pino'] },
  { query: 'middleware that sets a response header', libraries: ['hono', 'fastify'] },
  { query: 'how do I log errors in fastify with pino', libraries: [] },
  // Names no library: the libraries come from the whole-index probe, run on a worker too.
  { query: 'parse a value and report its validation issues', libraries: [] },
];

test('search answers retrieved on worker threads equal the request-thread answers', async () => {
  const pool = (s.services.context as StoreContextService).retrievalPool();
  assert.ok(pool && pool.size === 2, 'two retrieval workers are running');
  let workerCalls = 0;
  const search = pool.search.bind(pool);
  pool.search = (...args) => {
    workerCalls++;
    return search(...args);
  };
  let probeCalls = 0;
  const topVersions = pool.topVersions.bind(pool);
  pool.topVersions = (...args) => {
    probeCalls++;
    return topVersions(...args);
  };
  // The probe goes to a worker only while the pool is busy (else the request thread is sooner): act busy.
  Object.defineProperty(pool, 'pending', { get: () => 1, configurable: true });
  const inThread = new MultiLibrarySearch(() => s.services);
  for (const c of cases) {
    const u = new URLSearchParams({ query: c.query, type: 'json' });
    for (const l of c.libraries) u.append('library', l);
    const res = await s.api(`/api/v3/search?${u}`, { auth: null });
    assert.equal(res.status, 200, c.query);
    const body = (await res.json()) as SearchContextResponse;
    assert.ok(body.codeSnippets.length + body.infoSnippets.length > 0, `an answer for "${c.query}"`);
    const expected = await inThread.search({ query: c.query, libraries: c.libraries }, null);
    assert.deepEqual(body, expected.json, `same answer for "${c.query}"`);
    assert.equal(res.headers.get('x-stacks-libraries'), expected.headers['X-Stacks-Libraries']);
  }
  assert.equal(workerCalls, cases.length, 'every search retrieved on a worker');
  // A worker that failed to start (a module it cannot load) leaves the pool and the answers still come, from this thread.
  assert.equal(pool.size, 2, 'both workers are still alive');
  assert.equal(probeCalls, 1, 'the library-less question that names no library was probed on a worker');
  delete (pool as unknown as { pending?: number }).pending;
  const idle = await s.api(`/api/v3/search?${new URLSearchParams({ query: cases[cases.length - 1]!.query })}`, { auth: null });
  assert.equal(idle.status, 200);
  assert.equal(probeCalls, 1, 'an idle pool leaves the probe to the request thread');
});
