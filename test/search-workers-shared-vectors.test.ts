import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import type { SearchContextResponse } from '../server/search/answer-types.ts';
import type { StoreContextService } from '../server/search/context-service.ts';
import type { RetrievalPool } from '../server/search/retrieval-pool.ts';

/**
 * The two retrieval workers hold one copy of a complete version's vector chunks: the worker that
 * reads them out of SQLite hands them to the other through the pool, which scans them without
 * reading SQLite. A version replaced by a re-import is read again, never scanned from the old copy.
 */

let s: TestServer;

before(async () => {
  s = await startTestServer({ config: { searchWorkers: 2 } });
  await loadSearchCorpus(s.services, ['fastify', 'pino']);
});

after(async () => {
  await s?.close();
});

async function search(query: string): Promise<SearchContextResponse> {
  const res = await s.api(`/api/v3/search?${new URLSearchParams({ query, type: 'json', library: '/fastify/fastify' })}`, { auth: null });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-stacks-vectors'), 'ready');
  return (await res.json()) as SearchContextResponse;
}

async function loads(pool: RetrievalPool): Promise<number[]> {
  return (await pool.vectorStats()).map((w) => w.sharedLoads);
}

test('the second worker scans the vectors the first one loaded, and a replaced version is read again', async () => {
  const pool = (s.services.context as StoreContextService).retrievalPool();
  assert.ok(pool && pool.size === 2, 'two retrieval workers are running');
  const q = 'How do I register a plugin?';
  // An idle pool sends a job to its first worker: it reads the version's vectors out of SQLite.
  const first = await search(q);
  assert.deepEqual(await loads(pool), [1, 0]);
  // The chunks go to the second worker over their own port, which no job waits for.
  let stats = await pool.vectorStats();
  for (let i = 0; i < 50 && stats[1]!.sharedBytes === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    stats = await pool.vectorStats();
  }
  assert.ok(stats[1]!.sharedBytes > 0, 'the second worker was handed the chunks');
  assert.equal(stats[1]!.sharedBytes, stats[0]!.sharedBytes);
  assert.equal(pool.sharedVectorBytes, stats[0]!.sharedBytes, 'held once in the budget');

  // Two at once: one job on each worker; neither reads SQLite again, and both answer as before.
  const both = await Promise.all([search(q), search(q)]);
  assert.deepEqual(both, [first, first]);
  assert.deepEqual(await loads(pool), [1, 0], 'the second worker read the vectors out of SQLite instead of scanning the shared copy');

  // A re-import replaces the version: its vectors are read again (under a new key), then shared.
  await loadSearchCorpus(s.services, ['fastify']);
  await Promise.all([search(q), search(q)]);
  const replaced = await loads(pool);
  assert.ok(replaced[0]! + replaced[1]! >= 2, 'the replaced version was scanned from the old copy');
  // Once reported, the new copy is shared too (two workers that loaded it at once keep the first copy).
  await Promise.all([search(q), search(q)]);
  assert.deepEqual(await loads(pool), replaced);
  // Both workers can scan the same chunks (the retired version's until they are least recently scanned), counted once.
  const now = await pool.vectorStats();
  assert.equal(now[0]!.sharedBytes, now[1]!.sharedBytes);
  assert.equal(pool.sharedVectorBytes, now[0]!.sharedBytes);
});
