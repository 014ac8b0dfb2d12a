// Usage metering on PostgreSQL with requests spread over two nodes: each node is its own PgStore
// (its own pool) and its own UsageService, as two Stacks processes behind a load balancer have,
// on one PostgreSQL server. The per-minute rate limit (the shared token buckets of migration 004),
// the plan's included requests, the spending limit and the research quota hold to the request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Principal } from '../lib/model.ts';
import { ApiError } from '../lib/errors.ts';
import { PgStore } from '../server/store/pg/index.ts';
import { PgRateLimitStore } from '../server/store/pg/rate-limits.ts';
import { systemClock } from '../server/teams/clock.ts';
import { ClusterTokenBuckets, TokenBuckets, type RateLimiter } from '../server/teams/rate-limit.ts';
import { UsageService, type MeterOutcome } from '../server/teams/usage.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';

const T0 = '2026-11-01T00:00:00.000Z';

/** Two nodes on one database: a PgStore each, and a UsageService each over its own store and buckets. */
async function twoNodes(server: TestPostgres, name: string, perMinute: number): Promise<{ stores: PgStore[]; usage: UsageService[]; teamspace: number }> {
  const url = await server.createDatabase(name);
  const stores = [await PgStore.open(url, { poolSize: 4 }), await PgStore.open(url, { poolSize: 4 })];
  const teamspace = await stores[0].accounts.createTeamspace('acme', 'pro', T0);
  const usage = stores.map((s) => {
    const buckets: RateLimiter = perMinute > 0 ? new ClusterTokenBuckets(s.rateLimits, perMinute) : new TokenBuckets(0);
    return new UsageService(s.teams, buckets, systemClock(), () => teamspace);
  });
  return { stores, usage, teamspace };
}

async function principal(store: PgStore, teamspaceId: number, name: string, keyId: number): Promise<Principal> {
  const memberId = await store.accounts.createMember(teamspaceId, name, 'member', null, T0);
  return { keyId, memberId, memberName: name, teamspaceId, role: 'member', scope: 'all' };
}

type Answer = { ok: MeterOutcome } | { refused: ApiError };

/** One metered request: its outcome, or the ApiError it was refused with (anything else fails the test). */
async function answer(p: Promise<MeterOutcome>): Promise<Answer> {
  try {
    return { ok: await p };
  } catch (err) {
    if (err instanceof ApiError) return { refused: err };
    throw err;
  }
}

const codes = (answers: Answer[]) =>
  answers.reduce<Record<string, number>>((n, a) => {
    const k = 'ok' in a ? 'ok' : a.refused.code;
    return { ...n, [k]: (n[k] ?? 0) + 1 };
  }, {});

/** The refusal's headers, checked for a bucket of `perMinute` whose next token is due within one token's time. */
function assertRateHeaders(a: Answer, perMinute: number): void {
  assert.ok('refused' in a, 'refused');
  const h = a.refused.headers;
  const nowS = Date.now() / 1000;
  assert.equal(a.refused.code, 'rate_limit_exceeded');
  assert.deepEqual([h['RateLimit-Limit'], h['RateLimit-Remaining']], [String(perMinute), '0']);
  const retry = Number(h['Retry-After']);
  assert.ok(retry >= 1 && retry <= 60 / perMinute, `Retry-After ${retry}`);
  // full again in at most a minute, and not before the next token
  const reset = Number(h['RateLimit-Reset']);
  assert.ok(reset >= Math.floor(nowS) + retry - 1 && reset <= Math.ceil(nowS) + 61, `RateLimit-Reset ${reset} at ${nowS}`);
}

/** One key alternating between two nodes gets exactly the per-minute limit, with the right headers. */
async function rateAlternating(server: TestPostgres): Promise<void> {
  // 4 a minute: a token every 15 s, far more than the test's requests take
  const { stores, usage, teamspace } = await twoNodes(server, 'rate_alternating', 4);
  try {
    const ann = await principal(stores[0], teamspace, 'ann', 1);
    const answers: Answer[] = [];
    for (let i = 0; i < 10; i++) answers.push(await answer(usage[i % 2].meter(ann, '10.0.0.1')));
    assert.deepEqual(
      answers.map((a) => ('ok' in a ? 'ok' : a.refused.code)),
      ['ok', 'ok', 'ok', 'ok', ...Array<string>(6).fill('rate_limit_exceeded')],
    );
    // the admitted requests carry the month's numbers, counted once each whichever node took them
    assert.deepEqual(
      answers.slice(0, 4).map((a) => ('ok' in a ? a.ok.headers['RateLimit-Remaining'] : null)),
      ['4999', '4998', '4997', '4996'],
    );
    for (const a of answers.slice(4)) assertRateHeaders(a, 4);
    assert.equal((await stores[1].teams.memberMonth(ann.memberId, new Date().toISOString().slice(0, 7))).requests, 4, 'refused requests are not counted');

    // 15 s pass on the database's clock (the bucket's last take moved back): one token again, for either node, once
    await stores[0].pool.query("UPDATE rate_buckets SET at_ms = at_ms - 15000 WHERE key = 'key:1'");
    assert.deepEqual(codes([await answer(usage[1].meter(ann, '10.0.0.1')), await answer(usage[0].meter(ann, '10.0.0.1'))]), {
      ok: 1,
      rate_limit_exceeded: 1,
    });
    // another key has its own bucket; an anonymous caller is limited by address
    const bob = await principal(stores[1], teamspace, 'bob', 2);
    assert.ok('ok' in (await answer(usage[0].meter(bob, '10.0.0.1'))));
    const anonymous = [];
    for (let i = 0; i < 6; i++) anonymous.push(await answer(usage[i % 2].meter(null, '10.9.9.9')));
    assert.deepEqual(codes(anonymous), { ok: 4, rate_limit_exceeded: 2 });
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

/** Concurrent requests of one key on both nodes: exactly the limit admitted. */
async function rateConcurrent(server: TestPostgres): Promise<void> {
  const { stores, usage, teamspace } = await twoNodes(server, 'rate_concurrent', 5);
  try {
    const cy = await principal(stores[0], teamspace, 'cy', 3);
    // meterSoon, as the HTTP meter calls it: each node batches its requests' counting
    const answers = await Promise.all(usage.flatMap((u) => Array.from({ length: 12 }, () => answer(u.meterSoon(cy, '10.0.0.3')))));
    assert.deepEqual(codes(answers), { ok: 5, rate_limit_exceeded: 19 });
    for (const a of answers.filter((x) => 'refused' in x)) assertRateHeaders(a, 5);
    assert.equal((await stores[0].teams.memberMonth(cy.memberId, new Date().toISOString().slice(0, 7))).requests, 5);
    assert.deepEqual((await stores[0].pool.query('SELECT key, granted FROM rate_buckets')).rows, [{ key: 'key:3', granted: false }]);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

/** The plan's included requests and the spending limit hold when both nodes' UsageServices count at once. */
async function countingAcrossNodes(server: TestPostgres): Promise<void> {
  const { stores, usage, teamspace } = await twoNodes(server, 'counting', 0);
  try {
    const free = await stores[0].accounts.createTeamspace('free', 'free', T0);
    await stores[0].accounts.updateTeamspace(free, { included_requests: 30 });
    await stores[0].accounts.updateTeamspace(teamspace, { included_requests: 10, spending_limit_cents: 30, cents_per_extra_request: 1.5 });
    const ann = await principal(stores[0], free, 'ann', 1);
    const payers = [await principal(stores[0], teamspace, 'bob', 2), await principal(stores[1], teamspace, 'cy', 3)];
    const month = new Date().toISOString().slice(0, 7);
    const both = (f: (u: UsageService, i: number) => Promise<MeterOutcome>) =>
      Promise.all(usage.flatMap((u) => Array.from({ length: 25 }, (_, i) => answer(f(u, i)))));

    assert.deepEqual(codes(await both((u) => u.meterSoon(ann, 'x'))), { ok: 30, rate_limit_exceeded: 20 });
    // 10 included per member, then 20 extra at 1.5 cents up to the teamspace's 30 cents, then 402
    const paying = await both((u, i) => u.meterSoon(payers[i % 2], 'x'));
    assert.deepEqual(codes(paying), { ok: 40, spending_limit_exceeded: 10 });
    assert.equal(paying.filter((a) => 'ok' in a && a.ok.extra).length, 20);

    assert.deepEqual(await stores[1].teams.memberMonth(ann.memberId, month), { requests: 30, extra_requests: 0 });
    assert.deepEqual(await stores[1].teams.teamMonth(teamspace, month), { requests: 40, extra_requests: 20, spend_cents: 30 });
    // anonymous requests through both nodes are counted under one synthetic member
    await Promise.all(usage.map((u) => u.meter(null, '10.0.0.9')));
    const anonymous = await Promise.all(usage.map((u) => u.memberOf(null)));
    assert.equal(anonymous[0].memberId, anonymous[1].memberId);
    assert.equal((await stores[0].teams.memberMonth(anonymous[0].memberId, month)).requests, 2);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

/**
 * Many members of two teamspaces send requests through both nodes at once, in waves that overlap
 * (each wave a batch per node, mixing members and teamspaces, while the waves before it are still
 * counting), starting on a month whose counter rows do not exist yet: every member gets exactly its
 * included requests, each once, the extra ones stop exactly at the spending limit, and what was
 * refused is not counted.
 */
async function manyMembersAcrossNodes(server: TestPostgres): Promise<void> {
  const { stores, usage } = await twoNodes(server, 'many_members', 0);
  try {
    const pro = await stores[0].accounts.createTeamspace('pro-team', 'pro', T0);
    await stores[0].accounts.updateTeamspace(pro, { included_requests: 3, spending_limit_cents: 10, cents_per_extra_request: 0.5 }); // 20 extra requests
    const free = await stores[0].accounts.createTeamspace('free-team', 'free', T0);
    await stores[0].accounts.updateTeamspace(free, { included_requests: 4 });
    const payers = await Promise.all(Array.from({ length: 6 }, (_, i) => principal(stores[i % 2], pro, `p${i}`, 10 + i)));
    const freeloaders = await Promise.all(Array.from({ length: 4 }, (_, i) => principal(stores[i % 2], free, `f${i}`, 20 + i)));
    const everyone = [...payers, ...freeloaders];
    // 8 waves; in each, every member sends one request, through node (wave + member) % 2, in an order that changes per wave
    const sent: { who: Principal; answer: Promise<Answer> }[] = [];
    for (let wave = 0; wave < 8; wave++) {
      const order = everyone.map((p, i) => ({ p, i })).sort((a, b) => ((a.i * 7 + wave * 3) % 10) - ((b.i * 7 + wave * 3) % 10));
      for (const { p, i } of order) sent.push({ who: p, answer: answer(usage[(wave + i) % 2].meterSoon(p, 'x')) });
      await new Promise((r) => setImmediate(r));
    }
    const answers = await Promise.all(sent.map(async (s) => ({ who: s.who, a: await s.answer })));
    const of = (p: Principal) => answers.filter((x) => x.who === p).map((x) => x.a);

    // pro: 6 x 3 included, then 20 extra at 0.5 cents up to 10 cents, and the other 10 refused (402)
    assert.deepEqual(codes(payers.flatMap(of)), { ok: 38, spending_limit_exceeded: 10 });
    assert.equal(payers.flatMap(of).filter((a) => 'ok' in a && a.ok.extra).length, 20);
    // free: 4 each, the other 4 of each refused (429)
    assert.deepEqual(codes(freeloaders.flatMap(of)), { ok: 16, rate_limit_exceeded: 16 });
    // each member's included requests went once each: one answer per remaining count, none twice
    for (const [p, included] of [...payers.map((x) => [x, 3] as const), ...freeloaders.map((x) => [x, 4] as const)]) {
      const remaining = of(p)
        .flatMap((a) => ('ok' in a && !a.ok.extra ? [Number(a.ok.headers['RateLimit-Remaining'])] : []))
        .sort((a, b) => a - b);
      assert.deepEqual(
        remaining,
        Array.from({ length: included }, (_, i) => i),
        `${p.memberName}'s included requests`,
      );
    }

    // the counters hold exactly what was admitted, whichever node reads them
    const month = new Date().toISOString().slice(0, 7);
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(await stores[1].teams.teamMonth(pro, month), { requests: 38, extra_requests: 20, spend_cents: 10 });
    assert.deepEqual(await stores[0].teams.teamMonth(free, month), { requests: 16, extra_requests: 0, spend_cents: 0 });
    for (const p of everyone) {
      const admitted = of(p).filter((a) => 'ok' in a);
      const extra = admitted.filter((a) => 'ok' in a && a.ok.extra).length;
      assert.deepEqual(await stores[1].teams.memberMonth(p.memberId, month), { requests: admitted.length, extra_requests: extra }, p.memberName);
      assert.deepEqual(await stores[0].teams.memberDaily(p.memberId, today, today), [{ day: today, requests: admitted.length }]);
    }
    assert.deepEqual(await stores[1].teams.teamDaily(pro, today, today), [{ day: today, requests: 38 }]);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

/** The research quota holds when both nodes' stores take at once. */
async function researchAcrossNodes(server: TestPostgres): Promise<void> {
  const { stores, teamspace } = await twoNodes(server, 'research', 0);
  try {
    const ann = await principal(stores[0], teamspace, 'ann', 1);
    const takes = await Promise.all(stores.flatMap((s) => Array.from({ length: 20 }, () => s.research.take(ann.memberId, '2026-W48', 15))));
    assert.equal(takes.filter((t) => t.taken).length, 15);
    assert.deepEqual([...new Set(takes.filter((t) => t.taken).map((t) => t.used))].length, 15, 'each taken request saw its own count');
    await stores[1].research.refund(ann.memberId, '2026-W48');
    assert.equal((await stores[0].research.take(ann.memberId, '2026-W48', 15)).taken, true);
    assert.equal(await stores[1].research.used(ann.memberId, '2026-W48'), 15);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

/** The sweep deletes the buckets full again (a minute untouched), never the one it takes from. */
async function sweep(server: TestPostgres): Promise<void> {
  const { stores } = await twoNodes(server, 'rate_sweep', 0);
  try {
    const buckets = new PgRateLimitStore(stores[0].pool);
    for (const key of ['old-a', 'old-b', 'young', 'taker']) await buckets.take(key, 3, false);
    await stores[0].pool.query("UPDATE rate_buckets SET at_ms = at_ms - 61000 WHERE key IN ('old-a', 'old-b', 'taker')");
    // no sweep asked: nothing goes
    await new PgRateLimitStore(stores[1].pool).take('young', 3, false);
    assert.equal((await stores[0].pool.query('SELECT count(*)::int AS n FROM rate_buckets')).rows[0].n, 4);
    // the sweeping take is of an old key: that bucket is refilled (full, then one taken), the other old ones deleted
    const t = await new PgRateLimitStore(stores[1].pool).take('taker', 3, true);
    assert.deepEqual([t.taken, t.tokens], [true, 2]);
    const { rows } = await stores[0].pool.query<{ key: string }>('SELECT key FROM rate_buckets ORDER BY key');
    assert.deepEqual(
      rows.map((r) => r.key),
      ['taker', 'young'],
    );
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

describe('usage metering on PostgreSQL across two nodes', () => {
  let server: TestPostgres;
  before(async () => {
    server = await startPostgres('debian');
  });
  after(async () => {
    await server?.close();
  });

  test('one key alternating between two nodes gets exactly the per-minute limit, with the right headers', () => rateAlternating(server));

  test('concurrent requests of one key on both nodes: exactly the limit admitted', () => rateConcurrent(server));

  test("the plan's included requests and the spending limit hold when both nodes' UsageServices count at once", () => countingAcrossNodes(server));

  test('many members of two teamspaces on both nodes at once, in overlapping batches: each limit counts and refuses exactly', () =>
    manyMembersAcrossNodes(server));

  test("the research quota holds when both nodes' stores take at once", () => researchAcrossNodes(server));

  test('the sweep deletes the buckets full again (a minute untouched), never the one it takes from', () => sweep(server));
});
