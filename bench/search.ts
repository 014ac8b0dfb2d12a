// `npm run bench -- search [--clients 16] [--seconds 20] [--single 300] [--names | --library-less] [--libraries 200 --per-library 5000 --dir DIR]`
// GET /api/v3/search with four `library` values at 1M snippets over 200 libraries (bench/corpus.ts):
// p50/p95 with one client (target p95 < 60 ms) and throughput with 16 concurrent clients (target
// >= 250 req/s). The server runs as its own process (`stacks serve`), as in production.
// --names: the values are repository names (fuzzy name matching); --library-less: no values, the
// libraries are chosen from the question (the targets are for the default, exact IDs).
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startStacksProcess } from '../test/helpers/server.ts';
import { httpGet, percentile } from './stats.ts';
import { ensureBenchCorpus } from './corpus.ts';
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
  },
  allowPositionals: true,
});

/** CPU time (user + system, ms) the server process has used: a figure that does not depend on how busy the machine is. */
function serverCpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100/s)
}

const corpus = await ensureBenchCorpus({
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

/** The issue's targets are for four exact library IDs; the other modes only report. */
const verdict = (target: string, met: boolean) => (opts.names || opts['library-less'] ? '' : `  (target ${target}: ${met ? 'met' : 'NOT met'})`);
const how = opts['library-less'] ? 'no library values (chosen from the question)' : `4 libraries per search by ${opts.names ? 'repository name (fuzzy path)' : 'exact ID'}`;
console.log(`corpus: ${corpus.snippets} snippets over ${ids.length} libraries (${corpus.dataDir}); ${how}`);
const { url, child } = await startStacksProcess({ dataDir: corpus.dataDir, env: { STACKS_RATE_LIMIT_PER_MINUTE: '0' } });
let seq = 0;
const one = async (): Promise<{ ms: number; ok: boolean; libs: number }> => {
  const target = requests[seq++ % requests.length]!;
  const t0 = performance.now();
  const res = await httpGet(url + target);
  const body = JSON.parse(res.body) as { codeSnippets?: { libraryId: string }[]; infoSnippets?: { libraryId: string }[] };
  const ms = performance.now() - t0;
  const libs = new Set([...(body.codeSnippets ?? []), ...(body.infoSnippets ?? [])].map((s) => s.libraryId)).size;
  return { ms, ok: res.status === 200, libs };
};
try {
  for (let i = 0; i < 30; i++) await one(); // warm the page cache and prepared statements
  const single: number[] = [];
  const cpu0 = serverCpuMs(child.pid!);
  let errors = 0;
  let libsSeen = 0;
  for (let i = 0; i < Number(opts.single); i++) {
    const x = await one();
    single.push(x.ms);
    if (!x.ok) errors++;
    libsSeen += x.libs;
  }
  const cpuPer = (serverCpuMs(child.pid!) - cpu0) / single.length;
  single.sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(1);
  console.log(`one client: ${single.length} searches, errors=${errors}, libraries answering per search=${(libsSeen / single.length).toFixed(2)}`);
  console.log(`  latency ms: p50=${f(percentile(single, 50))} p95=${f(percentile(single, 95))} p99=${f(percentile(single, 99))} max=${f(single[single.length - 1]!)}${verdict(`p95 < 60 ms`, percentile(single, 95) < 60)}`);

  console.log(`  server CPU per search: ${f(cpuPer)} ms (one core serves at most ~${f(1000 / cpuPer)} searches/s); load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`);

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
  const { lat, errs } = await run(Number(opts.seconds));
  const elapsed = (performance.now() - t0) / 1000;
  console.log(`${clients} clients: ${lat.length} searches in ${elapsed.toFixed(1)} s, errors=${errs}, throughput=${f(lat.length / elapsed)} req/s${verdict('>= 250', lat.length / elapsed >= 250)}`);
  console.log(`  latency ms: p50=${f(percentile(lat, 50))} p95=${f(percentile(lat, 95))} p99=${f(percentile(lat, 99))}`);
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}
