// `npm run bench -- accounting [--rounds 300] [--corpus shared|none]`
// Cost of teamspace accounting (per-key rate limit + monthly counting in SQLite) on GET /api/v3/search,
// measured in one run against one in-process server: requests alternate between accounting on and off
// (services.teams.metering), so both see the same caches and machine load. Also prints the cost of
// meter() and of AccessPolicy.canSee called directly, the search p50 with filters active, and the
// visibility checks of one request over a 200-library catalogue (owners, grants, both visibilities).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { startServer } from '../server/server.ts';
import { onSqlite } from '../server/services.ts';
import { openAccess } from '../server/teams/open-access.ts';
import { switchableAccess } from '../test/helpers/access.ts';
import { BENCH_QUESTIONS, percentile } from './stats.ts';

const { values: opts } = parseArgs({
  options: { rounds: { type: 'string', default: '300' }, corpus: { type: 'string', default: 'shared' } },
  allowPositionals: true,
});
const ROUNDS = Number(opts.rounds);

// The first six of the shared questions, as this benchmark has always used.
const QUERIES = BENCH_QUESTIONS.slice(0, 6);
const LIBS = ['', '/fastify/fastify', '/pinojs/pino', '/colinhacks/zod', '/vitejs/vite'];

const pct = (xs: number[], p: number) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p,
  );
const f = (ms: number) => `${ms.toFixed(3)} ms`;

type Bench = Awaited<ReturnType<typeof startServer>>;

/** The teamspace policy, or the open one while the policy's cost is measured against it. */
const access = switchableAccess();

/**
 * Runs `measure` `rounds` times in pairs, once with `on` set and once with `off`, alternating
 * which comes first so neither side always runs second. Returns both sides' timings.
 */
async function paired(rounds: number, on: () => void, off: () => void, measure: (i: number) => Promise<number>): Promise<{ on: number[]; off: number[] }> {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const first = i % 2 === 0;
    (first ? on : off)();
    (first ? a : b).push(await measure(i));
    (first ? off : on)();
    (first ? b : a).push(await measure(i));
  }
  return { on: a, off: b };
}

/** Timed HTTP GETs: a search (library or library-less, in turn) and a request that does no search. */
function timers(server: Bench, key: string) {
  const get = async (url: string, check: boolean): Promise<number> => {
    const t0 = process.hrtime.bigint();
    const r = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    await r.arrayBuffer();
    if (check && (r.status >= 500 || r.status === 429 || r.status === 402)) throw new Error(`status ${r.status}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const url = (i: number) => {
    const lib = LIBS[i % LIBS.length]!;
    return `${server.url}/api/v3/search?type=json&query=${encodeURIComponent(QUERIES[i % QUERIES.length]!)}${lib ? `&library=${encodeURIComponent(lib)}` : ''}`;
  };
  return {
    search: (i: number) => get(url(i), true),
    // Context for an unknown library answers 404 at once: the accounting alone, without the noise of a search.
    cheap: () => get(`${server.url}/api/v2/context?libraryId=/no/such&query=x`, false),
  };
}

async function measureAccounting(server: Bench, t: ReturnType<typeof timers>): Promise<void> {
  const s = onSqlite(server.services);
  const metering = (v: boolean) => () => void (s.teams.metering = v);
  const search = await paired(ROUNDS, metering(true), metering(false), t.search);
  const pairDiffs = search.on.map((x, i) => x - search.off[i]!);
  const d50 = pct(search.on, 50) - pct(search.off, 50);
  console.log(`search with accounting:    p50 ${f(pct(search.on, 50))}  p95 ${f(pct(search.on, 95))}`);
  console.log(`search without accounting: p50 ${f(pct(search.off, 50))}  p95 ${f(pct(search.off, 95))}`);
  console.log(`accounting adds at p50: ${f(d50)} (difference of the p50s); median of paired differences: ${f(pct(pairDiffs, 50))} (target < 1 ms)`);
  const cheap = await paired(ROUNDS * 5, metering(true), metering(false), t.cheap);
  s.teams.metering = true;
  console.log(
    `request without search (404): p50 ${f(pct(cheap.on, 50))} with, ${f(pct(cheap.off, 50))} without accounting; adds ${f(pct(cheap.on, 50) - pct(cheap.off, 50))} at p50`,
  );
}

/** The same search with library filters active and with the open (allow-all) policy, accounting on. */
async function measurePolicy(server: Bench, t: ReturnType<typeof timers>): Promise<void> {
  const s = onSqlite(server.services);
  await s.teams.policies.update(s.teams.defaultTeamspaceId(), {
    libraryFilters: { quality: { maxAgeDays: 3650, blockedLibraries: ['example.com', '/nobody/nothing'], repoFilters: { minStars: 0, allowedLicenses: [] } } },
  });
  const r = await paired(
    ROUNDS,
    () => access.use(null),
    () => access.use(openAccess),
    t.search,
  );
  access.use(null);
  console.log(`search, policy filters active: p50 ${f(pct(r.on, 50))}; open policy: p50 ${f(pct(r.off, 50))}; difference ${f(pct(r.on, 50) - pct(r.off, 50))}`);
}

/** The parts alone, without HTTP. */
async function measureParts(server: Bench, key: string): Promise<void> {
  const s = onSqlite(server.services);
  const principal = await s.keys.verify(key)!;
  const n = 20_000;
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await s.teams.usage.meter(principal, '127.0.0.1');
  const meterUs = Number(process.hrtime.bigint() - t0) / 1e3 / n;
  const libs = s.store.libraries.list();
  t0 = process.hrtime.bigint();
  let seen = 0;
  for (let i = 0; i < n; i++) for (const l of libs) if (s.access.canSee(principal, l)) seen++;
  const canSeeUs = Number(process.hrtime.bigint() - t0) / 1e3 / (n * libs.length);
  const canSee = libs.length ? `${canSeeUs.toFixed(2)} µs per library (${seen > 0 ? 'ok' : 'none visible'})` : 'no library loaded';
  console.log(`meter() alone: ${meterUs.toFixed(1)} µs per request (rate limit + one IMMEDIATE transaction: read, 3 UPSERTs); canSee: ${canSee}`);
}

/**
 * Visibility over 200 libraries: what one search request pays to filter the whole catalogue for
 * its reader (a member, another teamspace's member, an anonymous caller), with the per-library
 * memo warm (the same minute and policy) and cold (a fresh policy object, as after a change).
 * The checks read no snippet, so the figure holds at 1M snippets as at 0.
 */
async function measureVisibility(server: Bench, key: string): Promise<void> {
  const s = onSqlite(server.services);
  const now = new Date().toISOString();
  const other = await s.teams.teamspaces.create({ name: `bench-${Date.now()}`, owner: 'bench-owner' });
  const home = s.teams.defaultTeamspaceId();
  for (let i = s.store.libraries.list().length; i < 200; i++) {
    const id = `/bench/lib-${i}`;
    const owner = i % 3 === 0 ? other.teamspace.id : home;
    await s.store.libraries.upsert(
      {
        id,
        title: `Bench ${i}`,
        description: '',
        sourceType: i % 2 ? 'website' : 'repo',
        sourceUrl: `https://docs${i}.internal.test/`,
        teamspaceId: owner,
        visibility: i % 4 === 0 ? 'instance' : 'teamspace',
      },
      now,
    );
    if (i % 5 === 0) await s.store.libraries.setAccess(id, 'teamspace', [owner === home ? other.teamspace.id : home]);
  }
  const libs = s.store.libraries.list();
  const readers = { member: (await s.keys.verify(key))!, 'other teamspace': (await s.keys.verify(other.key.key))!, anonymous: null };
  const n = 5_000;
  const parts: string[] = [];
  for (const [name, reader] of Object.entries(readers)) {
    let seen = 0;
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) seen += libs.filter((l) => s.access.canSee(reader, l)).length;
    const warmUs = Number(process.hrtime.bigint() - t0) / 1e3 / n;
    t0 = process.hrtime.bigint();
    for (let i = 0; i < n / 10; i++) {
      await s.teams.cache.invalidate();
      seen += libs.filter((l) => s.access.canSee(reader, l)).length;
    }
    const coldUs = Number(process.hrtime.bigint() - t0) / 1e3 / (n / 10);
    parts.push(`${name} ${warmUs.toFixed(1)} µs warm, ${coldUs.toFixed(1)} µs cold (${Math.round(seen / (n * 1.1))} visible)`);
  }
  console.log(`visibility of ${libs.length} libraries per request: ${parts.join('; ')} (target < 1 ms)`);
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-accounting-'));
  const config = loadConfig({ dataDir, port: 0, host: '127.0.0.1', logLevel: 'warn', rateLimitPerMinute: 1_000_000 } as never, {});
  const server = await startServer(config, { log: createLogger('warn'), overrides: { access: access.override } });
  const s = onSqlite(server.services);
  const key = server.firstKey!.key;
  try {
    if (opts.corpus === 'shared') {
      const { loadCorpusBundles } = await import('../test/helpers/mcp.ts');
      await loadCorpusBundles(s, ['fastify', 'vite', 'hono', 'pino', 'zod']);
    }
    const snippets = s.store.libraries.allCurrentVersions().reduce((n, v) => n + v.totalSnippets, 0);
    console.log(`corpus: ${snippets} snippets in ${s.store.libraries.list().length} libraries; ${ROUNDS} rounds; sequential requests over loopback HTTP`);
    const t = timers(server, key);
    for (let i = 0; i < 30; i++) await t.search(i); // warm-up: caches, JIT
    await measureAccounting(server, t);
    await measurePolicy(server, t);
    await measureParts(server, key);
    await measureVisibility(server, key);
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
