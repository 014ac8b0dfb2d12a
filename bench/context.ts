// `npm run bench -- context [--seconds 15] [--single 400] [--clients 16] [--vectors builtin|model] [--dir DIR] [--libraries N --per-library M]`
// Latency and throughput of GET /api/v2/context on the cached 1M-snippet corpus (bench/corpus.ts):
// a real server in a child process (so its RSS is its own), a single client and 16 concurrent
// clients, fast=true and reranked, random libraries and questions from the corpus generator, after
// one question to each library (its own line: the first answers load each version's vectors).
// --vectors model: the corpus with projected vectors of the sentence model's shape, served by a
// server running the real model (STACKS_EMBED_PROVIDER=model: every question embedded by it);
// speed and memory only, the projected vectors' similarities mean nothing (bench/corpus.ts).
import path from 'node:path';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { startStacksProcess } from '../test/helpers/server.ts';
import { checkEmbedder, httpGet, memoryOf, percentile as pct, serverCpuMs, VectorsHeaderCount } from './stats.ts';
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
  },
  allowPositionals: true,
});

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
{
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
const { url, child } = await startStacksProcess({
  dataDir: corpus.dataDir,
  env: { STACKS_RATE_LIMIT_PER_MINUTE: '0', STACKS_EMBED_PROVIDER: vectors === 'model' ? 'model' : 'builtin' },
});
const vectorsHeader = new VectorsHeaderCount();
const pick = rng(99);
const samples = corpus.samples;

async function one(fast: boolean, s = samples[Math.floor(pick() * samples.length)]!): Promise<number> {
  const started = performance.now();
  const res = await httpGet(`${url}/api/v2/context?${new URLSearchParams({ libraryId: s.libraryId, query: s.query, fast: String(fast) })}`);
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
  vectorsHeader.add(res.headers);
  return performance.now() - started;
}

/** One phase's figures; `cpuMs`: the server's CPU time (all its threads) during the phase, shown per request. */
function report(label: string, lat: number[], seconds: number, cpuMs: number): void {
  const s = [...lat].sort((a, b) => a - b);
  console.log(
    `${label.padEnd(28)} n=${String(s.length).padStart(6)}  p50 ${pct(s, 50).toFixed(1).padStart(6)} ms  p95 ${pct(s, 95).toFixed(1).padStart(6)} ms  p99 ${pct(s, 99).toFixed(1).padStart(6)} ms  ${(s.length / seconds).toFixed(0).padStart(5)} req/s` +
      `  server CPU ${(cpuMs / s.length).toFixed(2)} ms/req  load ${os.loadavg()[0]!.toFixed(1)}`,
  );
}

// Sample the server's memory while the load runs.
let maxAnon = 0;
const sampler = setInterval(() => {
  try {
    maxAnon = Math.max(maxAnon, memoryOf(child.pid!).anon);
  } catch {
    /* exited */
  }
}, 200);

try {
  console.log(await checkEmbedder(url, corpus));
  // First, one question to each library: its version's vectors go into the workers' shared cache.
  // Reported on its own line, so that the phases after it measure a server in its steady state (every
  // version seen once) instead of whichever versions a random phase happens to load first.
  const firstOfEach = [...new Map(samples.map((s) => [s.libraryId, s])).values()];
  {
    const lat: number[] = [];
    const t0 = performance.now();
    const cpu0 = serverCpuMs(child.pid!);
    for (const [i, s] of firstOfEach.entries()) lat.push(await one(i % 2 === 0, s));
    report('first answer of each library', lat, (performance.now() - t0) / 1000, serverCpuMs(child.pid!) - cpu0);
  }
  // Warm-up: page cache, prepared statements, JIT.
  for (let i = 0; i < 200; i++) await one(i % 2 === 0);
  for (const fast of [true, false]) {
    const lat: number[] = [];
    const t0 = performance.now();
    const cpu0 = serverCpuMs(child.pid!);
    for (let i = 0; i < Number(values.single); i++) lat.push(await one(fast));
    report(`single client, ${fast ? 'fast' : 'reranked'}`, lat, (performance.now() - t0) / 1000, serverCpuMs(child.pid!) - cpu0);
  }
  const clients = Number(values.clients);
  const seconds = Number(values.seconds);
  for (const fast of [true, false]) {
    const lat: number[] = [];
    const end = performance.now() + seconds * 1000;
    const t0 = performance.now();
    const cpu0 = serverCpuMs(child.pid!);
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < end) lat.push(await one(fast));
      }),
    );
    report(`${clients} clients, ${fast ? 'fast' : 'reranked'}`, lat, (performance.now() - t0) / 1000, serverCpuMs(child.pid!) - cpu0);
  }
  console.log(`${vectorsHeader} (answers of the whole run, warm-up included)`);
  console.log(`WAL after the run: ${walSize().toFixed(1)} MB`);
  const mem = memoryOf(child.pid!);
  console.log(
    `server RSS ${mem.rss.toFixed(0)} MB (peak ${mem.peak.toFixed(0)} MB; now ${mem.anon.toFixed(0)} MB anonymous + ${mem.file.toFixed(0)} MB mapped files, ` +
      `the SQLite mmap of the database is file-backed and reclaimable; sampled max anonymous ${maxAnon.toFixed(0)} MB)`,
  );
} finally {
  clearInterval(sampler);
  child.kill('SIGTERM');
}
