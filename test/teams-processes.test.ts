import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStacksProcess, startTestServer, stopProcess, type StacksProcess } from './helpers/server.ts';
import { call } from './helpers/teams.ts';

/** Two server processes on one data directory: counting and the free-plan cap stay exact across them. */
test('counters are exact across two server processes sharing the database', async () => {
  const a = await startTestServer({ overrides: { embedder: null }, config: { rateLimitPerMinute: 0 } });
  let b: StacksProcess | null = null;
  try {
    b = await startStacksProcess({ dataDir: a.dataDir, args: ['--dev'], env: { STACKS_RATE_LIMIT_PER_MINUTE: '0' } });
    const bUrl = b.url;
    const path = '/api/v2/context?libraryId=/none/none&query=x';
    const hit = async (base: string) => (await fetch(new URL(path, base), { headers: { authorization: `Bearer ${a.key}` } })).status;
    const clients = 32;
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = 0; i < 10; i++) assert.notEqual(await hit(c % 2 ? bUrl : a.url), 429);
      }),
    );
    let u = (await call<{ member: { requests: number } }>(a, 'GET', '/api/v2/usage')).body;
    assert.equal(u.member.requests, clients * 10);

    await call(a, 'PATCH', '/api/v2/teamspace', { plan: 'free', includedRequests: clients * 10 + 50 });
    let ok = 0;
    let limited = 0;
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = 0; i < 4; i++) {
          const st = await hit(c % 2 ? bUrl : a.url);
          if (st === 429) limited++;
          else ok++;
        }
      }),
    );
    assert.equal(ok, 50, 'exactly the 50 remaining requests were admitted across both processes');
    assert.equal(limited, clients * 4 - 50);
    u = (await call<{ member: { requests: number } }>(a, 'GET', '/api/v2/usage')).body;
    assert.equal(u.member.requests, clients * 10 + 50);
  } finally {
    if (b) await stopProcess(b.child);
    await a.close();
  }
});
