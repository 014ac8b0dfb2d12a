// `npm run bench -- context [--seconds 15] [--single 400] [--clients 16] [--vectors builtin|model] [--dir DIR] [--libraries N --per-library M] [--postgres debian|pgvector [--nodes 2] [--pg-statements]]`
// Latency and throughput of GET /api/v2/context on the cached 1M-snippet corpus (bench/corpus.ts):
// a real server in a child process (so its RSS is its own), a single client and 16 concurrent
// clients, fast=true and reranked, random libraries and questions from the corpus generator, after
// one question to each library (its own line: the first answers load each version's vectors).
// --vectors model: the corpus with projected vectors of the sentence model's shape, served by a
// server running the real model (STACKS_EMBED_PROVIDER=model: every question embedded by it);
// speed and memory only, the projected vectors' similarities mean nothing (bench/corpus.ts).
// --postgres debian|pgvector: the nodes run on the corpus's copy in a persistent PostgreSQL cluster
// (bench/pg-cluster.ts; copied the first time, ~40 min); --nodes N: N nodes on it, requests round
// robin (bench/nodes.ts). Server CPU is the nodes' summed; PostgreSQL's own CPU is its processes'.
// --pg-statements: pg_stat_statements loaded, its costliest statements per request shown after each
// phase (where the database's time goes; under 16 clients, also what batching saves).
import path from 'node:path';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { checkEmbedder, httpGet, percentile as pct, VectorsHeaderCount } from './stats.ts';
import { startBenchNodes } from './nodes.ts';
import { parseFlavor, resetStatements, topStatements } from './pg-cluster.ts';
import os from 'node:os';
import { benchVectors, ensureBenchCorpus, rng } from './corpus.ts';
import { Store } from '../server/store/index.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    single: { type: 'string', default: '400' },
    clients: { type: 'string', default: '16' },
    dir: { type: 'string' },
    libraries: { type: 'string' },
    'per-library': { type: 'string' },
    vectors: { type: 'string' },
    postgres: { type: 'string' },
    nodes: { type: 'string', default: '1' },
    'pg-statements': { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const postgres = parseFlavor(values.postgres);

const vectors = benchVectors(values.vectors);
const corpus = await ensureBenchCorpus({
  vectors,
  dir: values.dir,
  libraries: values.libraries ? Number(values.libraries) : undefined,
  perLibrary: values['per-library'] ? Number(values['per-library']) : undefined,
});
console.log(
  `corpus: ${corpus.snippets.toLocaleString('en')} snippets, ${corpus.libraries.length} libraries, embedder ${corpus.embedder ?? 'none'} (${corpus.dataDir})`,
);
// Start from a checkpointed database: a WAL left large by an earlier run (request metering writes)
// slows every read of the next one several times.
if (!postgres) {
  const store = Store.open(corpus.dataDir);
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
}
const walSize = () => {
  try {
    return fs.statSync(path.join(corpus.dataDir, 'stacks.db-wal')).size / 1048576;
  } catch {
    return 0;
  }
};
const nodes = await startBenchNodes(corpus, {
  postgres,
  nodes: Number(values.nodes),
  statements: values['pg-statements'],
  env: { STACKS_RATE_LIMIT_PER_MINUTE: '0', STACKS_EMBED_PROVIDER: vectors === 'model' ? 'model' : 'builtin' },
});
console.log(`backend: ${nodes.label}; database ${((await nodes.databaseBytes()) / 1e9).toFixed(2)} GB`);
/** --pg-statements: the database whose pg_stat_statements shows where each single-client phase's database time went. */
const statements = values['pg-statements'] && nodes.pg ? nodes.pg.url : null;
/** The servers' CPU and PostgreSQL's, read together at a phase's start and end. */
const cpu = () => ({ nodes: nodes.nodesCpuMs(), db: nodes.databaseCpuMs() });
const vectorsHeader = new VectorsHeaderCount();
const pick = rng(99);
const samples = corpus.samples;

async function one(fast: boolean, s = samples[Math.floor(pick() * samples.length)]!, url = nodes.next()): Promise<number> {
  const started = performance.now();
  const res = await httpGet(`${url}/api/v2/context?${new URLSearchParams({ libraryId: s.libraryId, query: s.query, fast: String(fast) })}`);
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
  vectorsHeader.add(res.headers);
  return performance.now() - started;
}

/** One phase's figures; `from`: the CPU at its start (the nodes' all threads, and PostgreSQL's processes), shown per request. */
function report(label: string, lat: number[], seconds: number, from: ReturnType<typeof cpu>): void {
  const now = cpu();
  const s = [...lat].sort((a, b) => a - b);
  console.log(
    `${label.padEnd(28)} n=${String(s.length).padStart(6)}  p50 ${pct(s, 50).toFixed(1).padStart(6)} ms  p95 ${pct(s, 95).toFixed(1).padStart(6)} ms  p99 ${pct(s, 99).toFixed(1).padStart(6)} ms  ${(s.length / seconds).toFixed(0).padStart(5)} req/s` +
      `  server CPU ${((now.nodes - from.nodes) / s.length).toFixed(2)} ms/req` +
      (postgres ? `  PostgreSQL CPU ${((now.db - from.db) / s.length).toFixed(2)} ms/req` : '') +
      `  load ${os.loadavg()[0]!.toFixed(1)}`,
  );
}

// Sample the server's memory while the load runs.
let maxAnon = 0;
const sampler = setInterval(() => {
  try {
    maxAnon = Math.max(maxAnon, nodes.memory().anon);
  } catch {
    /* exited */
  }
}, 200);

try {
  for (const url of nodes.urls) console.log(await checkEmbedder(url, corpus));
  // First, one question to each library: its version's vectors go into the workers' shared cache.
  // Reported on its own line, so that the phases after it measure a server in its steady state (every
  // version seen once) instead of whichever versions a random phase happens to load first. Asked
  // of every node: each has its own cache.
  const firstOfEach = [...new Map(samples.map((s) => [s.libraryId, s])).values()];
  {
    const lat: number[] = [];
    const t0 = performance.now();
    const cpu0 = cpu();
    for (const url of nodes.urls) for (const [i, s] of firstOfEach.entries()) lat.push(await one(i % 2 === 0, s, url));
    report('first answer of each library', lat, (performance.now() - t0) / 1000, cpu0);
  }
  // Warm-up: page cache, prepared statements, JIT.
  for (let i = 0; i < 200; i++) await one(i % 2 === 0);
  for (const fast of [true, false]) {
    const lat: number[] = [];
    const t0 = performance.now();
    const cpu0 = cpu();
    if (statements) await resetStatements(statements);
    for (let i = 0; i < Number(values.single); i++) lat.push(await one(fast));
    report(`single client, ${fast ? 'fast' : 'reranked'}`, lat, (performance.now() - t0) / 1000, cpu0);
    if (statements) for (const line of await topStatements(statements, lat.length)) console.log(line);
  }
  const clients = Number(values.clients);
  const seconds = Number(values.seconds);
  for (const fast of [true, false]) {
    const lat: number[] = [];
    const end = performance.now() + seconds * 1000;
    const t0 = performance.now();
    const cpu0 = cpu();
    if (statements) await resetStatements(statements);
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < end) lat.push(await one(fast));
      }),
    );
    report(`${clients} clients, ${fast ? 'fast' : 'reranked'}`, lat, (performance.now() - t0) / 1000, cpu0);
    if (statements) for (const line of await topStatements(statements, lat.length)) console.log(line);
  }
  console.log(`${vectorsHeader} (answers of the whole run, warm-up included)`);
  if (!postgres) console.log(`WAL after the run: ${walSize().toFixed(1)} MB`);
  const mem = nodes.memory();
  console.log(
    `${nodes.urls.length > 1 ? 'first node' : 'server'} RSS ${mem.rss.toFixed(0)} MB (peak ${mem.peak.toFixed(0)} MB; now ${mem.anon.toFixed(0)} MB anonymous + ${mem.file.toFixed(0)} MB mapped files, ` +
      `the SQLite mmap of the database is file-backed and reclaimable; sampled max anonymous ${maxAnon.toFixed(0)} MB)`,
  );
} finally {
  clearInterval(sampler);
  await nodes.close();
}
