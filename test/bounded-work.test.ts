import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import { httpMcpClient } from './helpers/mcp.ts';
import { hostileRequests, SHAPES, type HostileRequest } from './helpers/hostile.ts';
import { OPERATIONS } from '../server/contracts/index.ts';

// Issue 41: no request, for any input the validators accept, costs more than 250 ms on the
// reference corpora. Every text parameter of every operation gets every worst-case shape at its
// longest accepted length (test/helpers/hostile.ts). A request over the bound is sent twice more
// and the fastest of the three counts, so that a busy machine does not fail the test: a step that
// grows with the square or cube of a 2,000-character input costs seconds, not a few hundred ms.
const BOUND_MS = 250;

let s: TestServer;
before(async () => {
  s = await startTestServer();
  await loadSearchCorpus(s.services);
});
after(async () => {
  await s?.close();
});

async function timed(r: HostileRequest): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const res = await s.api(r.path, { method: r.method, headers: r.headers, body: r.body });
  await res.arrayBuffer();
  return { ms: performance.now() - t, status: res.status };
}

async function fastestOf(run: () => Promise<number>): Promise<number> {
  let best = await run();
  // Far over the bound is not a busy machine: no second try (a super-linear step costs seconds each).
  for (let i = 0; i < 2 && best > BOUND_MS && best < 4 * BOUND_MS; i++) best = Math.min(best, await run());
  return best;
}

test('every text parameter of every operation, at its longest and worst shape, answers within the bound and never 5xx', async () => {
  const requests = hostileRequests(OPERATIONS);
  assert.ok(requests.length > 500, `${requests.length} requests`);
  const slow: string[] = [];
  const failed: string[] = [];
  for (const r of requests) {
    let status = 0;
    const ms = await fastestOf(async () => {
      const res = await timed(r);
      status = res.status;
      return res.ms;
    });
    if (status >= 500) failed.push(`${r.label}: ${status}`);
    if (ms > BOUND_MS) slow.push(`${r.label}: ${Math.round(ms)} ms`);
  }
  assert.deepEqual(failed, [], 'no 5xx');
  assert.deepEqual(slow, [], `over ${BOUND_MS} ms`);
});

test('long questions of many words, and questions with a library, within the bound', async () => {
  const slow: string[] = [];
  for (const shape of ['words', 'question', 'frames', 'dotted', 'camel']) {
    const q = SHAPES[shape]!(2000);
    for (const path of [
      `/api/v3/search?${new URLSearchParams({ query: q })}`,
      `/api/v3/search?${new URLSearchParams({ query: q, library: 'fastify' })}`,
      `/api/v3/search?${new URLSearchParams({ query: q, library: 'zod', type: 'json' })}`,
      `/api/v2/context?${new URLSearchParams({ libraryId: '/pinojs/pino', query: q.slice(0, 500), type: 'json' })}`,
    ]) {
      const ms = await fastestOf(async () => (await timed({ label: '', method: 'GET', path, headers: {} })).ms);
      if (ms > BOUND_MS) slow.push(`${shape} ${path.slice(0, 60)}: ${Math.round(ms)} ms`);
    }
  }
  assert.deepEqual(slow, []);
});

test('the MCP tools take the same worst cases within the bound', async () => {
  const c = await httpMcpClient(s.url);
  try {
    const slow: string[] = [];
    const calls: [string, (v: string) => Record<string, unknown>][] = [
      ['resolve-library-id', (v) => ({ libraryName: v.slice(0, 500), query: v.slice(0, 500) })],
      ['query-docs', (v) => ({ libraryId: '/fastify/fastify', query: v.slice(0, 500) })],
      ['search-docs', (v) => ({ query: v })],
    ];
    for (const [name, args] of calls) {
      for (const [shape, make] of Object.entries(SHAPES)) {
        const ms = await fastestOf(async () => {
          const t = performance.now();
          await c.callTool({ name, arguments: args(make(2000)) });
          return performance.now() - t;
        });
        if (ms > BOUND_MS) slow.push(`${name} ${shape}: ${Math.round(ms)} ms`);
      }
    }
    assert.deepEqual(slow, []);
  } finally {
    await c.close();
  }
});

test('truncated and malformed JSON bodies are 400 with {error, message}', async () => {
  const bodies = OPERATIONS.filter((op) => op.http.from === 'body' || op.http.from === 'path+body');
  assert.ok(bodies.length > 10);
  for (const op of bodies) {
    const path = op.http.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'id' ? '999999' : 'x'));
    for (const body of ['{"name": "abc', '{', '[1,2', '"\\u00', '{"a":'.repeat(5000)]) {
      const res = await s.api(path, { method: op.http.method.toUpperCase(), headers: { 'content-type': 'application/json' }, body });
      const json = (await res.json()) as { error?: string; message?: string };
      assert.ok(res.status === 400 || res.status === 404 || res.status === 413, `${op.id} ${body.slice(0, 12)}: ${res.status}`);
      assert.ok(json.error && json.message, `${op.id}: {error, message}`);
    }
  }
});
