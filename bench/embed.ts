// `npm run bench -- embed [--repeat 3] [--copies 5]`
// The builtin embedder: cold load time and RSS increase of the converted table, embeddings per
// second on the real snippets of test/fixtures/corpus (one core), and writer throughput (snippets/s
// stored with FTS and vectors) with and without the embedder, and the re-embed job over
// `--copies` copies of the corpus written without vectors (as after a provider change).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { BuiltinEmbedder, WordTable } from '../server/embed/builtin.ts';
import { embeddingText } from '../server/embed/text.ts';
import { tableCandidates } from '../server/embed/index.ts';
import { Store } from '../server/store/index.ts';
import { LibraryWriter } from '../server/ingest/writer.ts';
import type { Embedder } from '../server/embed/types.ts';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { createServices } from '../server/services.ts';
import { REEMBED_KIND } from '../server/embed/reembed-job.ts';
import type { SnippetInput } from '../lib/model.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: { repeat: { type: 'string', default: '3' }, copies: { type: 'string', default: '5' }, child: { type: 'string' } },
  allowPositionals: true,
});

const file = tableCandidates(path.join(ROOT, 'data')).find((f) => fs.existsSync(f));
if (!file) {
  console.error('No embedding table: run node scripts/build-embeddings.mjs first.');
  process.exit(1);
}

// Child modes: a cold load in a fresh process (nothing else loaded, no JIT warm-up), and the same
// process without the load, whose RSS is the baseline.
if (opts.child === 'baseline') {
  console.log(JSON.stringify({ rssMB: process.memoryUsage().rss / 1048576 }));
  process.exit(0);
}
if (opts.child === 'load') {
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const table = WordTable.load(file);
  const t1 = performance.now();
  const e = new BuiltinEmbedder(table);
  const t2 = performance.now();
  e.embedOne('warm up the embedder with one sentence');
  const rss1 = process.memoryUsage().rss;
  console.log(JSON.stringify({ readMs: t1 - t0, totalMs: t2 - t0, rssMB: rss1 / 1048576, deltaMB: (rss1 - rss0) / 1048576, words: table.count }));
  process.exit(0);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

console.log(`table: ${path.relative(ROOT, file)} (${(fs.statSync(file).size / 1048576).toFixed(1)} MB)`);
function child<T>(mode: string): T {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'embed.ts'), '--child', mode], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
}
const loads: { readMs: number; totalMs: number; rssMB: number; deltaMB: number; words: number }[] = [];
const baselines: number[] = [];
for (let i = 0; i < Number(opts.repeat); i++) {
  loads.push(child('load'));
  baselines.push(child<{ rssMB: number }>('baseline').rssMB);
}
const rssIncrease = median(loads.map((l) => l.rssMB)) - median(baselines);
console.log(
  `cold load (median of ${loads.length} fresh processes): read ${median(loads.map((l) => l.readMs)).toFixed(0)} ms, ready ${median(loads.map((l) => l.totalMs)).toFixed(0)} ms, RSS +${rssIncrease.toFixed(0)} MB over the same process without the table (in-process delta ${median(loads.map((l) => l.deltaMB)).toFixed(0)} MB), ${loads[0]!.words} words`,
);

// Real snippets of the corpus copied into the repository, as the writer would embed them.
const corpusDir = path.join(ROOT, 'test/fixtures/corpus/bundles');
const inputs: SnippetInput[] = [];
for (const f of fs.existsSync(corpusDir) ? fs.readdirSync(corpusDir) : []) {
  const bundle = JSON.parse(fs.readFileSync(path.join(corpusDir, f), 'utf8')) as {
    libraries: {
      codeSnippets: { id: string; title: string; description: string; language: string; codeList: { language: string; code: string }[] }[];
      infoSnippets: { id: string; content: string; breadcrumb?: string }[];
    }[];
  };
  for (const lib of bundle.libraries) {
    for (const c of lib.codeSnippets)
      inputs.push({ kind: 'code', sourceId: c.id, title: c.title, description: c.description, language: c.language, pageTitle: '', codeList: c.codeList });
    for (const s of lib.infoSnippets) inputs.push({ kind: 'info', sourceId: s.id, content: s.content, breadcrumb: s.breadcrumb });
  }
}
if (inputs.length === 0) throw new Error(`no bundles in ${corpusDir}`);
const texts = inputs.map((s) =>
  s.kind === 'code'
    ? embeddingText({ kind: 'code', title: s.title, breadcrumb: s.breadcrumb ?? '', description: s.description, content: '', codeList: s.codeList })
    : embeddingText({ kind: 'info', title: '', breadcrumb: s.breadcrumb ?? '', description: '', content: s.content, codeList: null }),
);
const avgChars = texts.reduce((n, t) => n + t.length, 0) / texts.length;

const embedder = new BuiltinEmbedder(WordTable.load(file));
embedder.embedOne('warm up');
const rates: number[] = [];
const cpuRates: number[] = [];
for (let i = 0; i < Number(opts.repeat); i++) {
  const fresh = new BuiltinEmbedder(embedder.table); // empty OOV cache each round: no flattering repeats
  const t = performance.now();
  const cpu = process.cpuUsage();
  await fresh.embed(texts);
  const used = process.cpuUsage(cpu);
  rates.push(texts.length / ((performance.now() - t) / 1000));
  cpuRates.push(texts.length / ((used.user + used.system) / 1e6));
}
console.log(
  `embed: ${texts.length} corpus snippets (avg ${avgChars.toFixed(0)} chars), median ${median(rates).toFixed(0)} snippets/s wall clock, ${median(cpuRates).toFixed(0)} per CPU-second (one core)`,
);

/** Snippets per CPU-second of this process (user + system): steadier than wall clock on a loaded machine. */
const perCpuSecond = (n: number, since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return n / ((used.user + used.system) / 1e6);
};

// Writer throughput: normalization, tokens, FTS rows and vectors in one transaction per batch.
async function writerRate(e: Embedder | null): Promise<{ wall: number; cpu: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-embed-'));
  const store = Store.open(dir);
  try {
    if (e) await store.vectors.ensure(e.id, e.dims);
    const writer = new LibraryWriter(store, e);
    const build = await writer.begin({ id: '/bench/embed', title: 'Bench', description: '', sourceType: 'repo' });
    const t = performance.now();
    const cpu = process.cpuUsage();
    for (let i = 0; i < inputs.length; i += 500) await build.add(inputs.slice(i, i + 500));
    await build.commit();
    return { wall: inputs.length / ((performance.now() - t) / 1000), cpu: perCpuSecond(inputs.length, cpu) };
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const withVectors = await writerRate(embedder);
const without = await writerRate(null);
console.log(
  `writer: ${withVectors.wall.toFixed(0)} snippets/s with builtin vectors (${withVectors.cpu.toFixed(0)} per CPU-second), ${without.wall.toFixed(0)} snippets/s without an embedder (${without.cpu.toFixed(0)} per CPU-second)`,
);

// Re-embed job: snippets written without an embedder, then a start with the builtin one.
{
  const copies = Number(opts.copies);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-reembed-'));
  try {
    const store = Store.open(dir);
    const writer = new LibraryWriter(store, null);
    for (let c = 0; c < copies; c++) {
      const build = await writer.begin({ id: `/bench/reembed${c}`, title: 'Bench', description: '', sourceType: 'repo' });
      for (let i = 0; i < inputs.length; i += 500) await build.add(inputs.slice(i, i + 500));
      await build.commit();
    }
    store.close();
    const services = await createServices(loadConfig({ dataDir: dir, logLevel: 'warn', embedProvider: 'builtin' } as never, {}), createLogger('warn'));
    const t = performance.now();
    const cpu = process.cpuUsage();
    services.jobs.start();
    await services.jobs.idle();
    const seconds = (performance.now() - t) / 1000;
    const cpuSeconds = ((u) => (u.user + u.system) / 1e6)(process.cpuUsage(cpu));
    const [job] = await services.jobs.list({ kind: REEMBED_KIND });
    const done = Number(job?.progress.done ?? 0);
    console.log(
      `reembed job: ${done} snippets in ${seconds.toFixed(1)} s = ${(done / seconds).toFixed(0)} snippets/s (${(done / cpuSeconds).toFixed(0)} per CPU-second, ${job?.state}), ${await services.store.vectors.missingCount()} left without a vector`,
    );
    await services.jobs.stop();
    await services.store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
