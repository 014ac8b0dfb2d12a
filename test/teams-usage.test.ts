import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { call } from './helpers/teams.ts';

type Usage = {
  plan: string;
  resetsAt: string;
  member: { requests: number; includedInPlan: number; remaining: number; extraRequests: number };
  teamspace: {
    requests: number;
    extraRequests: number;
    spendCents: number;
    spendingLimitCents: number | null;
    days: number;
    daily: { date: string; requests: number }[];
  };
};

/** A metered request. The meter decides before any route runs, so the route's own answer (200 or 404) does not matter here. */
const METERED = '/api/v2/context?libraryId=/none/none&query=hello&type=json';

async function hit(s: TestServer, auth?: string | null, path = METERED) {
  const res = await s.api(path, { auth });
  const body = (await res.json().catch(() => null)) as { error?: string } | null;
  return { status: res.status, body, h: (n: string) => res.headers.get(n) };
}

const usage = async (s: TestServer, q = '', auth?: string | null) => (await call<Usage>(s, 'GET', `/api/v2/usage${q}`, undefined, auth)).body;

function nextMonthUnix(d = new Date()): number {
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}

const start = (config = {}) => startTestServer({ overrides: { embedder: null }, config });

test('metered responses carry RateLimit-* equal to the member numbers in usage; usage and policies are not counted', async () => {
  const s = await start();
  try {
    const u0 = await usage(s);
    assert.equal(u0.plan, 'enterprise');
    assert.equal(u0.member.requests, 0);
    assert.equal(u0.member.includedInPlan, 100000, 'enterprise default');
    assert.equal(u0.resetsAt, new Date(nextMonthUnix() * 1000).toISOString());
    for (const path of [METERED, '/api/v3/search?query=hello&type=json', '/api/v2/libs/search?libraryName=x&query=y']) {
      const r = await hit(s, undefined, path);
      assert.notEqual(r.status, 429);
      const u = await usage(s);
      assert.equal(r.h('ratelimit-limit'), String(u.member.includedInPlan), path);
      assert.equal(r.h('ratelimit-remaining'), String(u.member.remaining), path);
      assert.equal(r.h('ratelimit-reset'), String(nextMonthUnix()), path);
    }
    await call(s, 'GET', '/api/v2/policies');
    await usage(s);
    const u = await usage(s);
    assert.equal(u.member.requests, 3, 'three metered requests, usage and policies calls not counted');
    assert.equal(u.teamspace.requests, 3);
    assert.equal(u.teamspace.daily.at(-1)!.requests, 3);
    assert.equal((await s.api('/api/v2/usage', { auth: null })).status, 401);

    // MCP: tool calls count, protocol chatter does not.
    const mcp = (method: string) =>
      s.api('/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method,
          params: method === 'tools/call' ? { name: 'resolve-library-id', arguments: { libraryName: 'x', query: 'y' } } : {},
        }),
      });
    const listed = await mcp('tools/list');
    assert.equal(listed.headers.get('ratelimit-limit'), null);
    const called = await mcp('tools/call');
    assert.equal(called.headers.get('ratelimit-remaining'), String(100000 - 4));
    assert.equal((await usage(s)).member.requests, 4);

    // Anonymous requests count under the default teamspace's anonymous member.
    const anon = await hit(s, null);
    assert.equal(anon.h('ratelimit-remaining'), String(100000 - 1));
    const after = await usage(s);
    assert.equal(after.member.requests, 4);
    assert.equal(after.teamspace.requests, 5);
    const members = await call<{ members: { name: string }[] }>(s, 'GET', '/api/v2/members');
    assert.deepEqual(
      members.body.members.map((m) => m.name),
      ['admin'],
      'the anonymous member is not listed',
    );
  } finally {
    await s.close();
  }
});

test('free plan: 429 at includedInPlan with Retry-After and RateLimit-*, reset at the start of the next month', async () => {
  const s = await start();
  try {
    let now = new Date(Date.UTC(2031, 0, 31, 23, 59, 0));
    s.services.teams.clock.now = () => now;
    const set = await call(s, 'PATCH', '/api/v2/teamspace', { plan: 'free', includedRequests: 3 });
    assert.equal(set.status, 200);
    assert.equal(set.body.includedRequests, 3);
    const reset = Date.UTC(2031, 1, 1) / 1000;
    for (let i = 1; i <= 3; i++) {
      const r = await hit(s);
      assert.notEqual(r.status, 429);
      assert.equal(r.h('ratelimit-limit'), '3');
      assert.equal(r.h('ratelimit-remaining'), String(3 - i));
      assert.equal(r.h('ratelimit-reset'), String(reset));
    }
    const refused = await hit(s);
    assert.equal(refused.status, 429);
    assert.equal(refused.body?.error, 'rate_limit_exceeded');
    assert.equal(refused.h('retry-after'), String(reset - now.getTime() / 1000), 'seconds until the month restarts');
    assert.equal(refused.h('ratelimit-limit'), '3');
    assert.equal(refused.h('ratelimit-remaining'), '0');
    assert.equal(refused.h('ratelimit-reset'), String(reset));
    // Anonymous callers share one allowance of their own (the default teamspace's anonymous member).
    for (let i = 1; i <= 3; i++) assert.equal((await hit(s, null)).h('ratelimit-remaining'), String(3 - i));
    assert.equal((await hit(s, null)).status, 429);
    let u = await usage(s);
    assert.equal(u.plan, 'free');
    assert.equal(u.member.requests, 3, 'refused requests are not counted');
    assert.equal(u.teamspace.requests, 6);
    assert.equal(u.member.remaining, 0);
    assert.equal(u.teamspace.extraRequests, 0);
    assert.equal(u.resetsAt, '2031-02-01T00:00:00.000Z');

    now = new Date(Date.UTC(2031, 1, 1, 0, 0, 5));
    const fresh = await hit(s);
    assert.notEqual(fresh.status, 429);
    assert.equal(fresh.h('ratelimit-remaining'), '2');
    assert.equal(fresh.h('ratelimit-reset'), String(Date.UTC(2031, 2, 1) / 1000));
    u = await usage(s, '?days=5');
    assert.equal(u.member.requests, 1);
    assert.equal(u.teamspace.requests, 1, 'monthly numbers restarted');
    assert.deepEqual(
      u.teamspace.daily.slice(-2),
      [
        { date: '2031-01-31', requests: 6 },
        { date: '2031-02-01', requests: 1 },
      ],
      'daily history is kept across months',
    );
  } finally {
    await s.close();
  }
});

test('pro, enterprise and payg continue past includedInPlan as extraRequests; spending limit gives 402', async () => {
  const s = await start();
  try {
    const member = (await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'dev' })).body.key.key;
    for (const plan of ['pro', 'enterprise'] as const) {
      await call(s, 'PATCH', '/api/v2/teamspace', { plan, includedRequests: 2, centsPerExtraRequest: 0.5, spendingLimitCents: null });
      const before = await usage(s);
      for (let i = 0; i < 4; i++) assert.notEqual((await hit(s)).status, 429);
      const u = await usage(s);
      assert.equal(u.plan, plan);
      assert.equal(u.member.requests - before.member.requests, 4);
      assert.equal(u.member.remaining, 0);
      assert.equal(u.teamspace.extraRequests - before.teamspace.extraRequests, plan === 'pro' ? 2 : 4, 'past the included 2, every request is extra');
    }
    let u = await usage(s);
    assert.equal(u.member.extraRequests, 6);
    assert.equal(u.teamspace.spendCents, 3);

    // payg includes nothing: every request is extra, also for a member who has not used any.
    const payg = await call(s, 'PATCH', '/api/v2/teamspace', { plan: 'payg', centsPerExtraRequest: 2, spendingLimitCents: 9 });
    assert.equal(payg.body.includedRequests, 0);
    const first = await hit(s, member);
    assert.equal(first.h('ratelimit-limit'), '0');
    assert.equal(first.h('ratelimit-remaining'), '0');
    u = await usage(s, '', member);
    assert.equal(u.member.includedInPlan, 0);
    assert.equal(u.member.extraRequests, 1);
    assert.equal(u.teamspace.spendCents, 5);
    // Limit 9 cents: 5 + 2 = 7 passes, 7 + 2 = 9 passes, 9 + 2 > 9 is refused.
    assert.notEqual((await hit(s, member)).status, 402);
    assert.notEqual((await hit(s)).status, 402);
    const refused = await hit(s, member);
    assert.equal(refused.status, 402);
    assert.equal(refused.body?.error, 'spending_limit_exceeded');
    u = await usage(s);
    assert.equal(u.teamspace.spendCents, 9);
    assert.equal(u.teamspace.spendingLimitCents, 9);
    assert.equal(u.teamspace.extraRequests, 9, 'the refused request is not counted');

    const denied = await call(s, 'PATCH', '/api/v2/teamspace', { spendingLimitCents: 100 }, member);
    assert.equal(denied.status, 403, 'members cannot change limits');
    await call(s, 'PATCH', '/api/v2/teamspace', { spendingLimitCents: 11 });
    assert.notEqual((await hit(s, member)).status, 402, 'raising the limit lets requests through');
    assert.equal((await hit(s, member)).status, 402);
    assert.equal((await call(s, 'PATCH', '/api/v2/teamspace', { plan: 'gold' })).status, 400);
  } finally {
    await s.close();
  }
});

test('usage days window: 1-90, default 30, at most 10 on free; daily sums match', async () => {
  const s = await start();
  try {
    let now = new Date(Date.UTC(2031, 4, 10, 12));
    s.services.teams.clock.now = () => now;
    for (const bad of ['0', '91', 'abc', '2.5']) {
      const r = await call(s, 'GET', `/api/v2/usage?days=${bad}`);
      assert.equal(r.status, 400, bad);
      assert.equal(r.body.error, 'validation_error');
      assert.match(String(r.body.message), /days/);
    }
    now = new Date(Date.UTC(2031, 4, 8, 9));
    await hit(s);
    await hit(s);
    now = new Date(Date.UTC(2031, 4, 10, 12));
    for (let i = 0; i < 3; i++) await hit(s);
    let u = await usage(s);
    assert.equal(u.teamspace.days, 30);
    assert.equal(u.teamspace.daily.length, 30);
    assert.equal(u.teamspace.daily[0]!.date, '2031-04-11');
    assert.equal(u.teamspace.daily.at(-1)!.date, '2031-05-10');
    u = await usage(s, '?days=3');
    assert.deepEqual(u.teamspace.daily, [
      { date: '2031-05-08', requests: 2 },
      { date: '2031-05-09', requests: 0 },
      { date: '2031-05-10', requests: 3 },
    ]);
    assert.equal(
      u.teamspace.daily.reduce((a, d) => a + d.requests, 0),
      u.teamspace.requests,
    );
    assert.equal((await usage(s, '?days=90')).teamspace.daily.length, 90);
    assert.equal((await usage(s, '?days=1')).teamspace.daily.length, 1);
    await call(s, 'PATCH', '/api/v2/teamspace', { plan: 'free' });
    u = await usage(s, '?days=90');
    assert.equal(u.teamspace.days, 10, 'free plans are clamped to 10 days');
    assert.equal(u.teamspace.daily.length, 10);
    assert.equal(u.member.includedInPlan, 1000, 'free default');
  } finally {
    await s.close();
  }
});

test('counters are exact with 32 concurrent clients and survive a restart; the free cap admits exactly includedInPlan', async () => {
  const s = await start();
  const dataDir = s.dataDir;
  let s2: TestServer | null = null;
  try {
    const keys: string[] = [];
    for (let i = 0; i < 4; i++) keys.push((await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: `dev${i}` })).body.key.key);
    const clients = 32;
    const each = 10;
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = 0; i < each; i++) assert.notEqual((await hit(s, keys[c % 4])).status, 429);
      }),
    );
    let u = await usage(s, '', keys[0]);
    assert.equal(u.teamspace.requests, clients * each);
    assert.equal(u.member.requests, (clients / 4) * each);
    assert.equal(u.teamspace.daily.at(-1)!.requests, clients * each);
    await s.close();

    s2 = await startTestServer({ dataDir, license: false, overrides: { embedder: null } });
    u = await usage(s2, '', keys[0]);
    assert.equal(u.teamspace.requests, clients * each, 'counters survive a restart');
    await hit(s2, keys[0]);
    assert.equal((await usage(s2, '', keys[0])).member.requests, (clients / 4) * each + 1);

    // Free plan, 100 included per member, 32 clients racing 5 requests each on one key: exactly 100 pass.
    const team = s2.services.teams.defaultTeamspaceId();
    await s2.services.teams.plans.update(team, { plan: 'free', includedRequests: 100 });
    const racer = (await s2.services.teams.members.add(team, 'operator', { name: 'racer' })).key!.key;
    let ok = 0;
    let limited = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let i = 0; i < 5; i++) {
          const r = await hit(s2!, racer);
          if (r.status === 429) limited++;
          else ok++;
        }
      }),
    );
    assert.equal(ok, 100);
    assert.equal(limited, 60);
    assert.equal((await usage(s2!, '', racer)).member.requests, 100);
  } finally {
    await s.close();
    await s2?.close();
  }
});

test('per-key rate limit per minute: 429 with Retry-After; other keys unaffected', async () => {
  const s = await start({ rateLimitPerMinute: 5 });
  try {
    const other = (await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'other' })).body.key.key;
    for (let i = 0; i < 5; i++) assert.notEqual((await hit(s)).status, 429);
    const r = await hit(s);
    assert.equal(r.status, 429);
    assert.equal(r.body?.error, 'rate_limit_exceeded');
    const retry = Number(r.h('retry-after'));
    assert.ok(retry >= 1 && retry <= 12, `Retry-After ${retry}`);
    assert.equal(r.h('ratelimit-limit'), '5');
    assert.equal(r.h('ratelimit-remaining'), '0');
    assert.ok(Number(r.h('ratelimit-reset')) > Date.now() / 1000);
    assert.notEqual((await hit(s, other)).status, 429);
    assert.equal((await usage(s)).member.requests, 5, 'the refused request is not counted');
  } finally {
    await s.close();
  }
});
