// `npm run bench -- background [--seconds 15] [--single 300] [--clients 16] [--dir DIR] [--libraries N --per-library M]`
// Serving while background work runs (issue 38): GET /api/v2/context on a copy of the cached
// corpus (bench/corpus.ts), first quiet, then while every version learns its ranking model again
// (`search-model` jobs, each in a worker thread of its own). Target: the busy figures within 20% of
// the quiet ones. Both phases run in one invocation, against the same server process's data, so the
// ratios compare like with like on a machine whose load may change between runs.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startStacksProcess, stopProcess, tempDir } from '../test/helpers/server.ts';
import { httpGet, percentile } from './stats.ts';
import { ensureBenchCorpus, rng } from './corpus.ts';
import { Store } from '../server/store/index.ts';
import { SEARCH_MODEL_KIND } from '../server/search/model-job.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    single: { type: 'string', default: '300' },
    clients: { type: 'string', default: '16' },
    dir: { type: 'string' },
    libraries: { type: 'string' },
    'per-library': { type: 'string' },
  },
  allowPositionals: true,
});

const corpus = await ensureBenchCorpus({
  dir: values.dir,
  libraries: values.libraries ? Number(values.libraries) : undefined,
  perLibrary: values['per-library'] ? Number(values['per-library']) : undefined,
});
console.log(`corpus: ${corpus.snippets.toLocaleString('en')} snippets, ${corpus.libraries.length} libraries (copied from ${corpus.dataDir})`);

// A copy: the busy phase marks every stored model stale, which the cached corpus must not keep.
const dataDir = tempDir('stacks-bench-background-');
{
  const store = Store.open(corpus.dataDir);
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
}
fs.cpSync(corpus.dataDir, dataDir, { recursive: true });

const pick = rng(7);
const samples = corpus.samples;
async function one(url: string, fast: boolean, headers: Record<string, string>): Promise<number> {
  const s = samples[Math.floor(pick() * samples.length)]!;
  const started = performance.now();
  const res = await httpGet(`${url}/api/v2/context?${new URLSearchParams({ libraryId: s.libraryId, query: s.query, fast: String(fast) })}`, headers);
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
  return performance.now() - started;
}

interface Figures {
  singleP95: number;
  rps: number;
  fastRps: number;
}

async function measure(url: string, headers: Record<string, string>): Promise<Figures> {
  for (let i = 0; i < 100; i++) await one(url, i % 2 === 0, headers);
  const single: number[] = [];
  for (let i = 0; i < Number(values.single); i++) single.push(await one(url, false, headers));
  const load = async (fast: boolean) => {
    let n = 0;
    const end = performance.now() + Number(values.seconds) * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: Number(values.clients) }, async () => {
        while (performance.now() < end) {
          await one(url, fast, headers);
          n++;
        }
      }),
    );
    return n / ((performance.now() - t0) / 1000);
  };
  const rps = await load(false);
  const fastRps = await load(true);
  return {
    singleP95: percentile(
      single.sort((a, b) => a - b),
      95,
    ),
    rps,
    fastRps,
  };
}

/** The search-model jobs of the copy, read beside the running server (a second connection to the WAL database). */
async function learningJobs(): Promise<{ waiting: number; succeeded: number }> {
  const store = Store.open(dataDir);
  try {
    const n = async (state: 'queued' | 'running' | 'succeeded') => (await store.jobs.list({ kind: SEARCH_MODEL_KIND, state, limit: 100_000 })).length;
    return { waiting: (await n('queued')) + (await n('running')), succeeded: await n('succeeded') };
  } finally {
    store.close();
  }
}

const env = { STACKS_RATE_LIMIT_PER_MINUTE: '0' };
const quiet = await startStacksProcess({ dataDir, env });
const headers: Record<string, string> = {};
let calm: Figures;
try {
  calm = await measure(quiet.url, headers);
} finally {
  await stopProcess(quiet.child);
}

// Every version's model marked as of another format: at start the server queues them all again.
{
  const store = Store.open(dataDir);
  for (const v of store.libraries.allCurrentVersions()) await store.models.put(v.id, 0, '{}', new Date(0).toISOString());
  store.close();
}
const busy = await startStacksProcess({ dataDir, env: { ...env, STACKS_LEARN_RANKING: 'true' } });
let loaded: Figures;
try {
  const before = await learningJobs();
  loaded = await measure(busy.url, headers);
  const after = await learningJobs();
  console.log(`search-model jobs: ${before.waiting} waiting when the busy phase began; at its end ${after.succeeded} done, ${after.waiting} waiting`);
  if (after.waiting === 0) console.log('  (learning ended before the phase did: the busy figures are partly quiet)');
} finally {
  await stopProcess(busy.child);
}

const row = (label: string, q: number, b: number, higherIsBetter: boolean) => {
  const ratio = b / q;
  const within = higherIsBetter ? ratio >= 0.8 : ratio <= 1.2;
  console.log(
    `${label.padEnd(34)} quiet ${q.toFixed(1).padStart(7)}  learning ${b.toFixed(1).padStart(7)}  ratio ${ratio.toFixed(2)}  (target within 20%: ${within ? 'met' : 'NOT met'})`,
  );
};
row('one client p95, reranked (ms)', calm.singleP95, loaded.singleP95, false);
row(`${values.clients} clients, reranked (req/s)`, calm.rps, loaded.rps, true);
row(`${values.clients} clients, fast (req/s)`, calm.fastRps, loaded.fastRps, true);
fs.rmSync(dataDir, { recursive: true, force: true });
console.log(`(data copied to and removed from ${path.basename(dataDir)})`);
