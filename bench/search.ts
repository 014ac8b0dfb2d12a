// `npm run bench -- search [--clients 16] [--seconds 20] [--single 300] [--names | --library-less] [--vectors builtin|model] [--libraries 200 --per-library 5000 --dir DIR] [--postgres debian|pgvector [--nodes 2] [--pg-statements]]`
// GET /api/v3/search with four `library` values at 1M snippets over 200 libraries (bench/corpus.ts):
// p50/p95 with one client (target p95 < 60 ms) and throughput with 16 concurrent clients (target
// >= 250 req/s). The server runs as its own process (`stacks serve`), as in production.
// --names: the values are repository names (fuzzy name matching); --library-less: no values, the
// libraries are chosen from the question (the targets are for the default, exact IDs).
// --vectors model: the corpus with projected vectors of the sentence model's shape, served by a
// server running the real model (every question embedded by it); speed and memory only, the
// projected vectors' similarities mean nothing (bench/corpus.ts). The server's RSS is printed last.
// --postgres debian|pgvector [--nodes N]: N nodes on the corpus's copy in a persistent PostgreSQL
// cluster, requests round robin (bench/nodes.ts); PostgreSQL's CPU per search is reported too;
// --pg-statements shows the one-client phase's costliest statements per search.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { checkEmbedder, httpGet, percentile, VectorsHeaderCount } from './stats.ts';
import { startBenchNodes } from './nodes.ts';
import { parseFlavor, resetStatements, topStatements } from './pg-cluster.ts';
import { benchVectors, ensureBenchCorpus } from './corpus.ts';
import { rng } from '../test/helpers/rng.ts';

const { values: opts } = parseArgs({
  options: {
    clients: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
    single: { type: 'string', default: '300' },
    names: { type: 'boolean', default: false },
    'library-less': { type: 'boolean', default: false },
    libraries: { type: 'string' },
    'per-library': { type: 'string' },
    dir: { type: 'string' },
    vectors: { type: 'string' },
    postgres: { type: 'string' },
    nodes: { type: 'string', default: '1' },
    'pg-statements': { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const postgres = parseFlavor(opts.postgres);

const vectors = benchVectors(opts.vectors);
const corpus = await ensureBenchCorpus({
  vectors,
  dir: opts.dir,
  libraries: opts.libraries ? Number(opts.libraries) : undefined,
  perLibrary: opts['per-library'] ? Number(opts['per-library']) : undefined,
});
const ids = corpus.libraries;
const vocab = corpus.vocabulary;
const r = rng(42);
const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;

/** 500 request URLs: four distinct libraries (exact IDs, or repository names with --names) and a question from their topics. */
const requests = Array.from({ length: 500 }, () => {
  const libs = new Set<string>();
  while (libs.size < Math.min(4, ids.length)) libs.add(pick(ids));
  const chosen = [...libs];
  const topic = corpus.topics[chosen[0]!] ?? vocab;
  const question = `how do I ${pick(topic)} the ${pick(vocab.slice(100, 1500))} ${pick(topic)} with ${pick(vocab.slice(0, 800))}`;
  const u = new URLSearchParams({ query: question, type: 'json' });
  if (!opts['library-less']) for (const id of chosen) u.append('library', opts.names ? id.split('/').pop()! : id);
  return `/api/v3/search?${u}`;
});

/** The issue's targets are for four exact library IDs; the other modes only report. With the model's vectors issue 38 asks >= 200 req/s. */
const throughputTarget = vectors === 'model' ? 200 : 250;
const verdict = (target: string, met: boolean) => (opts.names || opts['library-less'] ? '' : `  (target ${target}: ${met ? 'met' : 'NOT met'})`);
const how = opts['library-less']
  ? 'no library values (chosen from the question)'
  : `4 libraries per search by ${opts.names ? 'repository name (fuzzy path)' : 'exact ID'}`;
console.log(`corpus: ${corpus.snippets} snippets over ${ids.length} libraries (${corpus.dataDir}); ${how}`);
const nodes = await startBenchNodes(corpus, {
  postgres,
  nodes: Number(opts.nodes),
  statements: opts['pg-statements'],
  env: { STACKS_RATE_LIMIT_PER_MINUTE: '0', STACKS_EMBED_PROVIDER: vectors === 'model' ? 'model' : 'builtin' },
});
console.log(`backend: ${nodes.label}; database ${((await nodes.databaseBytes()) / 1e9).toFixed(2)} GB`);
const vectorsHeader = new VectorsHeaderCount();
// The server's memory, sampled while the load runs.
let maxAnon = 0;
const sampler = setInterval(() => {
  try {
    maxAnon = Math.max(maxAnon, nodes.memory().anon);
  } catch {
    /* exited */
  }
}, 200);
let seq = 0;
/** The first failed answer, shown at the end: a count of errors alone does not say what went wrong. */
let firstError: string | null = null;
const one = async (): Promise<{ ms: number; ok: boolean; libs: number }> => {
  const target = requests[seq++ % requests.length]!;
  const t0 = performance.now();
  const res = await httpGet(nodes.next() + target);
  const body = JSON.parse(res.body) as { codeSnippets?: { libraryId: string }[]; infoSnippets?: { libraryId: string }[] };
  const ms = performance.now() - t0;
  vectorsHeader.add(res.headers);
  if (res.status !== 200) firstError ??= `HTTP ${res.status} ${res.body.slice(0, 300)} (${target})`;
  const libs = new Set([...(body.codeSnippets ?? []), ...(body.infoSnippets ?? [])].map((s) => s.libraryId)).size;
  return { ms, ok: res.status === 200, libs };
};
try {
  for (const url of nodes.urls) console.log(await checkEmbedder(url, corpus));
  // Each library asked once of each node first (its version's vectors loaded: in the workers' cache on
  // SQLite, the node's cache on PostgreSQL without pgvector), so that the phases measure a server in
  // its steady state rather than whichever versions their first requests happen to load.
  const w0 = performance.now();
  for (const url of nodes.urls)
    for (const id of ids)
      await httpGet(`${url}/api/v3/search?${new URLSearchParams({ query: `how do I ${pick(corpus.topics[id] ?? vocab)}`, library: id, type: 'json' })}`);
  console.log(`one search of each library on each node: ${((performance.now() - w0) / 1000).toFixed(1)} s`);
  for (let i = 0; i < 30; i++) await one(); // warm the page cache and prepared statements
  const single: number[] = [];
  const cpu0 = nodes.nodesCpuMs();
  const db0 = nodes.databaseCpuMs();
  const statements = opts['pg-statements'] && nodes.pg ? nodes.pg.url : null;
  if (statements) await resetStatements(statements);
  let errors = 0;
  let libsSeen = 0;
  for (let i = 0; i < Number(opts.single); i++) {
    const x = await one();
    single.push(x.ms);
    if (!x.ok) errors++;
    libsSeen += x.libs;
  }
  const cpuPer = (nodes.nodesCpuMs() - cpu0) / single.length;
  const dbPer = (nodes.databaseCpuMs() - db0) / single.length;
  single.sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(1);
  console.log(`one client: ${single.length} searches, errors=${errors}, libraries answering per search=${(libsSeen / single.length).toFixed(2)}`);
  console.log(
    `  latency ms: p50=${f(percentile(single, 50))} p95=${f(percentile(single, 95))} p99=${f(percentile(single, 99))} max=${f(single[single.length - 1]!)}${verdict(`p95 < 60 ms`, percentile(single, 95) < 60)}`,
  );

  console.log(
    `  server CPU per search: ${f(cpuPer)} ms${postgres ? ` + PostgreSQL ${f(dbPer)} ms` : ''} (one core serves at most ~${f(1000 / (cpuPer + dbPer))} searches/s); load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
  );

  if (statements) for (const line of await topStatements(statements, single.length)) console.log(line);
  const clients = Number(opts.clients);
  const run = async (seconds: number) => {
    const lat: number[] = [];
    let errs = 0;
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < end) {
          const x = await one();
          lat.push(x.ms);
          if (!x.ok) errs++;
        }
      }),
    );
    return { lat: lat.sort((a, b) => a - b), errs };
  };
  await run(Number(opts.warmup));
  const t0 = performance.now();
  const c0 = nodes.nodesCpuMs();
  const d0 = nodes.databaseCpuMs();
  const { lat, errs } = await run(Number(opts.seconds));
  const elapsed = (performance.now() - t0) / 1000;
  const loadCpu = `server CPU ${f((nodes.nodesCpuMs() - c0) / lat.length)} ms/search${postgres ? `, PostgreSQL ${f((nodes.databaseCpuMs() - d0) / lat.length)} ms/search` : ''}`;
  console.log(
    `${clients} clients: ${lat.length} searches in ${elapsed.toFixed(1)} s, errors=${errs}, throughput=${f(lat.length / elapsed)} req/s${verdict(`>= ${throughputTarget}`, lat.length / elapsed >= throughputTarget)}`,
  );
  console.log(`  latency ms: p50=${f(percentile(lat, 50))} p95=${f(percentile(lat, 95))} p99=${f(percentile(lat, 99))}; ${loadCpu}`);
  console.log(`${vectorsHeader} (answers of the whole run, warm-up included)`);
  if (firstError) console.log(`first error: ${firstError}`);
  const mem = nodes.memory();
  console.log(
    `${nodes.urls.length > 1 ? 'first node' : 'server'} RSS ${mem.rss.toFixed(0)} MB (peak ${mem.peak.toFixed(0)} MB; now ${mem.anon.toFixed(0)} MB anonymous + ${mem.file.toFixed(0)} MB mapped files; sampled max anonymous ${maxAnon.toFixed(0)} MB)`,
  );
} finally {
  clearInterval(sampler);
  await nodes.close();
}
