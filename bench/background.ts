// `npm run bench -- background [--work learn|embed] [--seconds 15] [--single 300] [--clients 16] [--dir DIR] [--libraries N --per-library M]`
// Serving while background work runs (issue 38): GET /api/v2/context on a copy of the cached
// corpus (bench/corpus.ts), quiet and while it runs. Target: the busy figures within 20% of
// the quiet ones.
// --work learn (default): every version learns its ranking model again (`search-model` jobs, each
// in a worker thread of its own); the builtin corpus.
// --work embed: the sentence model embeds the snippets of two reference bundles just imported (the
// embed job, the model's background lane), then the job is cancelled and the quiet phase follows;
// the corpus with the model's vector shape (`--vectors model` of bench/corpus.ts), served by the
// real model. The imported libraries are not asked.
// Both phases run in one invocation, against the same data, so the ratios compare like with like
// on a machine whose load may change between runs.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { devLicense, runStacks, startStacksProcess, stopProcess, tempDir } from '../test/helpers/server.ts';
import { bundlePath } from '../test/eval/bundles.ts';
import { finishedJob, httpGet, percentile } from './stats.ts';
import type { JobState } from '../lib/model.ts';
import { ensureBenchCorpus, rng } from './corpus.ts';
import { Store } from '../server/store/index.ts';
import { SEARCH_MODEL_KIND } from '../server/search/model-job.ts';

const { values } = parseArgs({
  options: {
    work: { type: 'string', default: 'learn' },
    seconds: { type: 'string', default: '15' },
    single: { type: 'string', default: '300' },
    clients: { type: 'string', default: '16' },
    dir: { type: 'string' },
    libraries: { type: 'string' },
    'per-library': { type: 'string' },
  },
  allowPositionals: true,
});

const work = values.work;
if (work !== 'learn' && work !== 'embed') throw new Error(`--work must be learn or embed, not ${work}`);
const corpus = await ensureBenchCorpus({
  vectors: work === 'embed' ? 'model' : 'builtin',
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
const headers: Record<string, string> = {};
const { calm, loaded } = work === 'learn' ? await whileLearning() : await whileEmbedding();

async function whileLearning(): Promise<{ calm: Figures; loaded: Figures }> {
  const quiet = await startStacksProcess({ dataDir, env });
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
  try {
    const before = await learningJobs();
    const loaded = await measure(busy.url, headers);
    const after = await learningJobs();
    console.log(`search-model jobs: ${before.waiting} waiting when the busy phase began; at its end ${after.succeeded} done, ${after.waiting} waiting`);
    if (after.waiting === 0) console.log('  (learning ended before the phase did: the busy figures are partly quiet)');
    return { calm, loaded };
  } finally {
    await stopProcess(busy.child);
  }
}

/**
 * One server with the model. Two imports start the embed job; the busy phase runs while it embeds
 * them, the quiet one after it is cancelled: the same data either way (an import's commits alone
 * made the first answers after it slower, so a quiet phase measured before the imports flattered it).
 */
async function whileEmbedding(): Promise<{ calm: Figures; loaded: Figures }> {
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  const made = await runStacks(['keys', 'create', '--data-dir', dataDir, '--name', 'bench', '--role', 'admin', '--json']);
  if (made.code !== 0) throw new Error(`stacks keys create: ${made.stderr}`);
  const key = (JSON.parse(made.stdout) as { key: string }).key;
  const auth = { authorization: `Bearer ${key}` };
  const server = await startStacksProcess({ dataDir, args: ['--dev'], env: { ...env, STACKS_EMBED_PROVIDER: 'model' } });
  try {
    await measure(server.url, headers); // not counted: a server that has answered before
    let snippets = 0;
    for (const name of ['vitest', 'nestjs']) {
      const res = await fetch(`${server.url}/api/import-libraries`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: fs.readFileSync(bundlePath(name)),
      });
      const body = (await res.json()) as { jobs: { jobId: number; snippets: number }[] };
      if (res.status !== 200) throw new Error(`import of ${name}: HTTP ${res.status} ${JSON.stringify(body)}`);
      const imported = await finishedJob<JobView>(server.url, key, body.jobs[0]!.jobId);
      if (imported.state !== 'succeeded') throw new Error(`import of ${name}: job ${imported.state}`);
      snippets += body.jobs[0]!.snippets;
    }
    const job = await embedJob(server.url, auth);
    if (job?.state !== 'running') throw new Error(`the embed job is not running after the imports: ${JSON.stringify(job)}`);
    await askEachLibrary(server.url);
    const loaded = await measure(server.url, headers);
    const cancelled = await fetch(`${server.url}/api/jobs/${job.id}/cancel`, { method: 'POST', headers: auth });
    if (cancelled.status !== 200) throw new Error(`cancel: HTTP ${cancelled.status}`);
    // It stops between two batches of 256 texts: seconds with nothing served.
    const stopped = await finishedJob<JobView>(server.url, key, job.id);
    if (stopped.state !== 'cancelled') throw new Error(`the embed job ${stopped.state} instead of stopping`);
    console.log(`embed job: ${snippets} snippets imported; ${stopped.progress?.done ?? 0} embedded when it was cancelled after the busy phase`);
    await askEachLibrary(server.url);
    const calm = await measure(server.url, headers);
    return { calm, loaded };
  } finally {
    await stopProcess(server.child);
  }
}

/** One question to each library: the versions' vectors are loaded again after the commits of imports or of the embed job. */
async function askEachLibrary(url: string): Promise<void> {
  for (const libraryId of corpus.libraryIds) {
    const s = samples.find((x) => x.libraryId === libraryId);
    if (s) await httpGet(`${url}/api/v2/context?${new URLSearchParams({ libraryId, query: s.query })}`, headers);
  }
}

interface JobView {
  id: number;
  state: JobState;
  progress?: { done?: number; total?: number } | null;
}

/** The newest embed job (kind `reembed`), once it has started. */
async function embedJob(url: string, auth: Record<string, string>): Promise<JobView | undefined> {
  for (let i = 0; i < 100; i++) {
    const { jobs } = (await (await fetch(`${url}/api/jobs?kind=reembed&limit=1`, { headers: auth })).json()) as { jobs: JobView[] };
    if (jobs[0] && jobs[0].state !== 'queued') return jobs[0];
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

const row = (label: string, q: number, b: number, higherIsBetter: boolean) => {
  const ratio = b / q;
  const within = higherIsBetter ? ratio >= 0.8 : ratio <= 1.2;
  console.log(
    `${label.padEnd(34)} quiet ${q.toFixed(1).padStart(7)}  ${work === 'learn' ? 'learning' : 'embedding'} ${b.toFixed(1).padStart(7)}  ratio ${ratio.toFixed(2)}  (target within 20%: ${within ? 'met' : 'NOT met'})`,
  );
};
row('one client p95, reranked (ms)', calm.singleP95, loaded.singleP95, false);
row(`${values.clients} clients, reranked (req/s)`, calm.rps, loaded.rps, true);
row(`${values.clients} clients, fast (req/s)`, calm.fastRps, loaded.fastRps, true);
fs.rmSync(dataDir, { recursive: true, force: true });
console.log(`(data copied to and removed from ${path.basename(dataDir)})`);
