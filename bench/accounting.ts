// `npm run bench -- accounting [--rounds 300] [--corpus shared|none]`
// Cost of teamspace accounting (per-key rate limit + monthly counting in SQLite) on GET /api/v3/search,
// measured in one run against one in-process server: requests alternate between accounting on and off
// (services.teams.metering), so both see the same caches and machine load. Also prints the cost of
// meter() and of AccessPolicy.canSee called directly, and the search p50 with filters active.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { startServer } from '../server/server.ts';
import { openAccess } from '../server/teams/open-access.ts';
import { BENCH_QUESTIONS, percentile } from './stats.ts';

const { values: opts } = parseArgs({
  options: { rounds: { type: 'string', default: '300' }, corpus: { type: 'string', default: 'shared' } },
  allowPositionals: true,
});
const ROUNDS = Number(opts.rounds);

// The first six of the shared questions, as this benchmark has always used.
const QUERIES = BENCH_QUESTIONS.slice(0, 6);
const LIBS = ['', '/fastify/fastify', '/pinojs/pino', '/colinhacks/zod', '/vitejs/vite'];

const pct = (xs: number[], p: number) => percentile([...xs].sort((a, b) => a - b), p);
const f = (ms: number) => `${ms.toFixed(3)} ms`;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-accounting-'));
  const config = loadConfig({ dataDir, port: 0, host: '127.0.0.1', logLevel: 'warn', rateLimitPerMinute: 1_000_000 } as never, {});
  const server = await startServer(config, { log: createLogger('warn') });
  const s = server.services;
  const key = server.firstKey!.key;
  try {
    if (opts.corpus === 'shared') {
      const { loadCorpusBundles } = await import('../test/helpers/mcp.ts');
      await loadCorpusBundles(s, ['fastify', 'vite', 'hono', 'pino', 'zod']);
    }
    const snippets = s.store.libraries.allCurrentVersions().reduce((n, v) => n + v.totalSnippets, 0);
    console.log(`corpus: ${snippets} snippets in ${s.store.libraries.list().length} libraries; ${ROUNDS} rounds; sequential requests over loopback HTTP`);

    const url = (i: number) => {
      const lib = LIBS[i % LIBS.length]!;
      return `${server.url}/api/v3/search?type=json&query=${encodeURIComponent(QUERIES[i % QUERIES.length]!)}${lib ? `&library=${encodeURIComponent(lib)}` : ''}`;
    };
    const timed = async (i: number): Promise<number> => {
      const t0 = process.hrtime.bigint();
      const r = await fetch(url(i), { headers: { authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      if (r.status >= 500 || r.status === 429 || r.status === 402) throw new Error(`status ${r.status}`);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    for (let i = 0; i < 30; i++) await timed(i); // warm-up: caches, JIT

    const on: number[] = [];
    const off: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // The same query twice in a row, once with and once without accounting; the order alternates
      // so neither side always runs second.
      const first = i % 2 === 0;
      s.teams.metering = first;
      (first ? on : off).push(await timed(i));
      s.teams.metering = !first;
      (first ? off : on).push(await timed(i));
    }
    const pairDiffs = on.map((x, i) => x - off[i]!);
    s.teams.metering = true;
    const d50 = pct(on, 50) - pct(off, 50);
    console.log(`search with accounting:    p50 ${f(pct(on, 50))}  p95 ${f(pct(on, 95))}`);
    console.log(`search without accounting: p50 ${f(pct(off, 50))}  p95 ${f(pct(off, 95))}`);
    console.log(`accounting adds at p50: ${f(d50)} (difference of the p50s); median of paired differences: ${f(pct(pairDiffs, 50))} (target < 1 ms)`);

    // The accounting alone on the HTTP path, on a request that does no search (context for an unknown
    // library answers 404 at once), where the noise of the search itself does not hide it.
    const cheap = async (): Promise<number> => {
      const t0 = process.hrtime.bigint();
      const r = await fetch(`${server.url}/api/v2/context?libraryId=/no/such&query=x`, { headers: { authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const cOn: number[] = [];
    const cOff: number[] = [];
    for (let i = 0; i < ROUNDS * 5; i++) {
      const first = i % 2 === 0;
      s.teams.metering = first;
      (first ? cOn : cOff).push(await cheap());
      s.teams.metering = !first;
      (first ? cOff : cOn).push(await cheap());
    }
    s.teams.metering = true;
    console.log(`request without search (404): p50 ${f(pct(cOn, 50))} with, ${f(pct(cOff, 50))} without accounting; adds ${f(pct(cOn, 50) - pct(cOff, 50))} at p50`);

    // The same search with library filters active and with the open (allow-all) policy, accounting on.
    s.teams.policies.update(s.teams.defaultTeamspaceId(), { libraryFilters: { quality: { maxAgeDays: 3650, blockedLibraries: ['example.com', '/nobody/nothing'], repoFilters: { minStars: 0, allowedLicenses: [] } } } });
    const team: number[] = [];
    const open: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const first = i % 2 === 0;
      s.access = first ? s.teams.access : openAccess;
      (first ? team : open).push(await timed(i));
      s.access = first ? openAccess : s.teams.access;
      (first ? open : team).push(await timed(i));
    }
    s.access = s.teams.access;
    console.log(`search, policy filters active: p50 ${f(pct(team, 50))}; open policy: p50 ${f(pct(open, 50))}; difference ${f(pct(team, 50) - pct(open, 50))}`);

    // The parts alone, without HTTP.
    const principal = s.keys.verify(key)!;
    const n = 20_000;
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) s.teams.usage.meter(principal, '127.0.0.1');
    const meterUs = Number(process.hrtime.bigint() - t0) / 1e3 / n;
    const libs = s.store.libraries.list();
    t0 = process.hrtime.bigint();
    let seen = 0;
    for (let i = 0; i < n; i++) for (const l of libs) if (s.access.canSee(principal, l)) seen++;
    const canSeeUs = Number(process.hrtime.bigint() - t0) / 1e3 / (n * libs.length);
    console.log(`meter() alone: ${meterUs.toFixed(1)} µs per request (rate limit + one IMMEDIATE transaction: read, 3 UPSERTs); canSee: ${canSeeUs.toFixed(2)} µs per library (${seen > 0 ? 'ok' : 'none visible'})`);
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
