import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import type { SearchContextResponse } from '../server/search/contracts.ts';
import { MultiLibrarySearch } from '../server/search/search-service.ts';
import type { StoreContextService } from '../server/search/context-service.ts';

/**
 * GET /api/v3/search with retrieval worker threads (STACKS_SEARCH_WORKERS=2): the candidates are
 * retrieved on a worker (its own read-only connection and snapshot) and the answer must be the
 * one the request thread computes on its own, for one library and for several.
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
});
