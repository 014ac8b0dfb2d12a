// `npm run bench -- pg-meter [--requests 2000] [--clients 16] [--rounds 3]`
// What metering costs on PostgreSQL (UsageService.meterSoon over PgTeamStore.countRequests, the per-key
// rate limit off): on a throwaway Debian PostgreSQL 15 (test/helpers/postgres.ts, fsync on as the
// serving benches have it) with pg_stat_statements loaded, per metered request the statements the
// server ran, the round trips the nodes made (queries sent by pg's Client), the transactions, and the
// CPU time (user+sys) of the node process and of PostgreSQL's processes, in three phases alternated
// `rounds` times: one client in sequence (a batch of one each time), then `clients` concurrent
// clients spread over two nodes (two PgStores, two pools), their members in one teamspace or each in
// its own (the rows they lock are then disjoint).
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { Principal } from '../lib/model.ts';
import { PgStore } from '../server/store/pg/index.ts';
import { systemClock } from '../server/teams/clock.ts';
import { TokenBuckets } from '../server/teams/rate-limit.ts';
import { UsageService } from '../server/teams/usage.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { pgCpuMs } from './pg-cluster.ts';
import { percentile } from './stats.ts';

const { values: opts } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    clients: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
  },
  allowPositionals: true,
});
const REQUESTS = Number(opts.requests);
const CLIENTS = Number(opts.clients);
const ROUNDS = Number(opts.rounds);
const T0 = '2026-01-01T00:00:00.000Z';

// Round trips: every query a pg Client sends (a multi-statement simple query is one).
let roundTrips = 0;
const send = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  roundTrips++;
  return (send as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

const server = await startPostgres('debian', { durable: true, settings: ['shared_preload_libraries=pg_stat_statements'] });
const url = await server.createDatabase('meter');
const stores = [await PgStore.open(url, { poolSize: 8 }), await PgStore.open(url, { poolSize: 8 })];
// The bench's own connection, for pg_stat_statements (its statements are subtracted from the phases').
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query('CREATE EXTENSION pg_stat_statements');
const usage = stores.map((s) => new UsageService(s.teams, new TokenBuckets(0), systemClock(), () => 1));

/** `n` members of one teamspace, or of `n` teamspaces; unlimited requests (an enterprise plan with 10^9 included). */
async function members(label: string, n: number, oneTeamspace: boolean): Promise<Principal[]> {
  const out: Principal[] = [];
  let ts = 0;
  for (let i = 0; i < n; i++) {
    if (i === 0 || !oneTeamspace) {
      ts = await stores[0]!.accounts.createTeamspace(`${label}-${i}`, 'enterprise', T0);
      await stores[0]!.accounts.updateTeamspace(ts, { included_requests: 1e9 });
    }
    const memberId = await stores[0]!.accounts.createMember(ts, `m${i}`, 'member', null, T0);
    out.push({ keyId: 1000 + out.length, memberId, memberName: `m${i}`, teamspaceId: ts, role: 'member', scope: 'all' });
  }
  return out;
}

interface Figures {
  wallMs: number;
  latencies: number[];
  nodeCpuMs: number;
  pgCpuMs: number;
  statements: number;
  roundTrips: number;
  transactions: number;
}

async function counters(): Promise<{ statements: number; transactions: number }> {
  // Transactions: the COMMITs (pg_stat_database's counters reach the view only when a backend flushes its stats).
  const { rows } = await admin.query<{ calls: string; xacts: string }>(
    `SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(calls) FILTER (WHERE query ~* '^\\s*commit'), 0) AS xacts
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return { statements: Number(rows[0]!.calls), transactions: Number(rows[0]!.xacts) };
}

/** `clients` loops, client i on node i % 2 as member i % members, sending `requests` metered requests between them. */
async function phase(who: Principal[], clients: number, requests: number): Promise<Figures> {
  await admin.query('SELECT pg_stat_statements_reset()');
  const before = await counters();
  const cpu0 = process.cpuUsage();
  const pg0 = pgCpuMs(server.pid);
  const trips0 = roundTrips;
  const latencies: number[] = [];
  let left = requests;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      while (left-- > 0) {
        const s = performance.now();
        await usage[i % 2]!.meterSoon(who[i % who.length]!, 'x');
        latencies.push(performance.now() - s);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const trips = roundTrips - trips0;
  const pgMs = pgCpuMs(server.pid) - pg0;
  const after = await counters();
  return {
    wallMs,
    latencies: latencies.sort((a, b) => a - b),
    nodeCpuMs: (cpu.user + cpu.system) / 1000,
    pgCpuMs: pgMs,
    // less the admin's own: the reset and the first counters query (one statement each)
    statements: after.statements - before.statements - 2,
    roundTrips: trips,
    transactions: after.transactions - before.transactions,
  };
}

const sequential = await members('seq', 1, true);
const oneTeam = await members('one', 8, true);
const manyTeams = await members('many', 8, false);
await phase(sequential, 1, 300); // warm-up: connections, plans, the month's rows
await phase(oneTeam, CLIENTS, 300);
await phase(manyTeams, CLIENTS, 300);

const phases = [
  { name: 'sequential, 1 client', who: sequential, clients: 1 },
  { name: `${CLIENTS} clients on 2 nodes, 8 members of one teamspace`, who: oneTeam, clients: CLIENTS },
  { name: `${CLIENTS} clients on 2 nodes, 8 members in 8 teamspaces`, who: manyTeams, clients: CLIENTS },
];
const results = new Map<string, Figures[]>(phases.map((p) => [p.name, []]));
for (let r = 0; r < ROUNDS; r++) for (const p of phases) results.get(p.name)!.push(await phase(p.who, p.clients, REQUESTS));

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const per = (x: number) => x / REQUESTS;
console.log(`pg-meter: ${REQUESTS} metered requests per phase, ${ROUNDS} rounds, medians over rounds (per request unless said)`);
for (const p of phases) {
  const f = results.get(p.name)!;
  console.log(`  ${p.name}:`);
  console.log(
    `    statements ${per(median(f.map((x) => x.statements))).toFixed(2)}, round trips ${per(median(f.map((x) => x.roundTrips))).toFixed(2)}, transactions ${per(median(f.map((x) => x.transactions))).toFixed(3)}`,
  );
  console.log(
    `    CPU node ${(per(median(f.map((x) => x.nodeCpuMs))) * 1000).toFixed(0)} µs + PostgreSQL ${(per(median(f.map((x) => x.pgCpuMs))) * 1000).toFixed(0)} µs` +
      ` (rounds: node ${f.map((x) => (per(x.nodeCpuMs) * 1000).toFixed(0)).join('/')}, pg ${f.map((x) => (per(x.pgCpuMs) * 1000).toFixed(0)).join('/')})`,
  );
  console.log(
    `    ${(REQUESTS / (median(f.map((x) => x.wallMs)) / 1000)).toFixed(0)} req/s, latency p50 ${median(f.map((x) => percentile(x.latencies, 50))).toFixed(3)} ms, p95 ${median(f.map((x) => percentile(x.latencies, 95))).toFixed(3)} ms`,
  );
}
await Promise.all(stores.map((s) => s.close()));
await admin.end();
await server.close();
