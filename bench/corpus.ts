// `npm run bench -- corpus [--libraries 200] [--per-library 5000] [--dir DIR] [--vectors builtin|model [--base-dir DIR]]`
// Builds (or reuses) the cached benchmark corpus: 1,000,000 synthetic snippets over 200 libraries,
// written through the real LibraryWriter (FTS rows + builtin-embedder vectors) into a data dir
// (.tmp/bench/1m in the repository, gitignored, or STACKS_BENCH_DIR). Other benchmarks import ensureBenchCorpus() and reuse the same dir.
//
// `--vectors model`: the same snippets with vectors of the sentence model's shape and identity
// (384 dims, the installed model's embedder id), in their own dir (.tmp/bench/1m-model, or
// STACKS_BENCH_MODEL_DIR), for serving benchmarks with STACKS_EMBED_PROVIDER=model. The model would
// take about 7 hours to embed a million snippets, so these vectors are NOT the model's: they are the
// builtin 100-d vectors of the same text through a fixed seeded random projection to 384 dims,
// normalised (bench/projected-vectors.ts), written by the embed job's own code (fillVectors: 8-bit
// vectors in the vector table and float copies in the snippet rows). They cost what the model's
// vectors cost to serve (KNN scan, memory); their similarities to the model's question vectors mean
// nothing. Figures on this corpus are speed and memory, not quality.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Store } from '../server/store/index.ts';
import { LibraryWriter } from '../server/ingest/writer.ts';
import { createEmbedder } from '../server/embed/index.ts';
import type { Embedder } from '../server/embed/types.ts';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import type { SnippetInput } from '../lib/model.ts';
import { learnModel } from '../server/search/learn.ts';
import { sqliteLearnSource } from '../server/search/learn-source.ts';
import { MODEL_FORMAT } from '../server/search/ranker.ts';
import { rng } from './rng.ts';
import { installedModel, ProjectedEmbedder, PROJECTION_VERSION, writeProjectedVectors, type ProjectionLabel } from './projected-vectors.ts';

/** Where the corpus is cached: STACKS_BENCH_DIR, else .tmp/bench/1m in the repository (gitignored). */
export const BENCH_CACHE_DIR = process.env.STACKS_BENCH_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.tmp/bench/1m');
/** The corpus with projected vectors of the sentence model's shape (`--vectors model`): STACKS_BENCH_MODEL_DIR, else BENCH_CACHE_DIR + `-model`. */
export const BENCH_MODEL_CACHE_DIR = process.env.STACKS_BENCH_MODEL_DIR ?? `${BENCH_CACHE_DIR}-model`;
/** Which vectors a bench corpus holds: the builtin word vectors, or projected vectors labelled as the sentence model's (speed and memory only). */
export type BenchVectors = 'builtin' | 'model';
/** Bumped when the generator changes, so a stale cache is rebuilt. */
const GENERATOR_VERSION = 2;
const MARKER = 'bench-corpus.json';

interface Marker {
  generatorVersion: number;
  perLibrary: number;
  /** Library IDs, /bench/lib000 ... */
  libraries: string[];
  snippets: number;
  embedder: string | null;
  /** Set when the vectors are not the embedder's own but projected (`--vectors model`): a benchmark device, speed and memory only. */
  vectors?: ProjectionLabel;
  /** Words each library is "about": use them to make realistic questions. */
  topics: Record<string, string[]>;
  /** Common words of the whole corpus (Zipf order). */
  vocabulary: string[];
}

export interface BenchCorpus extends Marker {
  /** Data dir holding stacks.db (pass it as STACKS_DATA_DIR / config.dataDir). Treat it as read-only. */
  dataDir: string;
  /** Same as `libraries`. */
  libraryIds: string[];
  /** 1,000 sample questions, each `{libraryId, query}` mixing a library's topic words with common words. */
  samples: { libraryId: string; query: string }[];
  /** The sample questions' texts (for benchmarks that pick libraries themselves). */
  queries: string[];
}

export interface BenchCorpusOptions {
  dir?: string;
  libraries?: number;
  perLibrary?: number;
  /** 'model': the corpus with projected vectors of the sentence model's shape (see the top of this file). Default 'builtin'. */
  vectors?: BenchVectors;
  /** With vectors 'model': the builtin corpus whose snippets it copies (default BENCH_CACHE_DIR; built first when missing). */
  baseDir?: string;
  log?: (msg: string) => void;
}

export { rng };

/** The real documentation the vocabulary comes from (the seven bundles of the original corpus, so the synthetic text stays the same). */
const VOCABULARY_BUNDLES = ['fastify', 'fastify-v3.29.5', 'fastify-v4.29.1', 'hono', 'pino', 'vite', 'zod'];

/** Words of the real documentation corpus, most frequent first (gives the synthetic text a real Zipf shape). */
function vocabulary(): string[] {
  const dir = path.resolve(import.meta.dirname, '../test/fixtures/corpus/bundles');
  const counts = new Map<string, number>();
  for (const f of VOCABULARY_BUNDLES.map((b) => `${b}.json`)) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8').toLowerCase();
    for (const m of text.matchAll(/[a-z]{3,14}/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, n]) => n >= 3)
    .sort((a, b) => b[1] - a[1])
    .map(([w]) => w)
    .slice(0, 12000);
}

function generator(vocab: string[], seed: number) {
  const rand = rng(seed);
  // Zipf sampling by inverse CDF over ranks (s ~ 1).
  const n = vocab.length;
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1);
  const zipf = () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return vocab[lo]!;
  };
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  return { rand, zipf, pick, cap };
}

function libraryTopics(vocab: string[], libraries: number): string[][] {
  const g = generator(vocab, 7);
  const mid = vocab.slice(300, 8000);
  return Array.from({ length: libraries }, () => Array.from({ length: 60 }, () => g.pick(mid)));
}

/** Snippets of one library: half code, half prose, grouped in pages of sections. */
function* librarySnippets(vocab: string[], topic: string[], lib: number, count: number): Generator<SnippetInput> {
  const g = generator(vocab, 1000 + lib);
  const word = () => (g.rand() < 0.25 ? g.pick(topic) : g.zipf());
  const words = (k: number) => Array.from({ length: k }, word).join(' ');
  const ident = () => `${word()}${g.cap(word())}`;
  for (let i = 0; i < count; i++) {
    const page = Math.floor(i / 20);
    const url = `https://docs.lib${String(lib).padStart(3, '0')}.example/guide/${topic[page % topic.length]}-${page}#section-${i}`;
    const heading = `${g.cap(words(2))} > ${g.cap(words(3))}`;
    if (i % 2 === 0) {
      const id = ident();
      const code = [
        `import { ${id} } from '${g.pick(topic)}'`,
        '',
        `const ${ident()} = ${id}({`,
        `  ${word()}: '${word()}',`,
        `  ${word()}: ${Math.floor(g.rand() * 1000)},`,
        '})',
        `${id}.${ident()}('${words(2)}')`,
      ].join('\n');
      yield {
        kind: 'code',
        sourceId: url,
        title: `${g.cap(words(3))} ${id}`,
        description: `${g.cap(words(14 + Math.floor(g.rand() * 16)))}.`,
        language: g.rand() < 0.7 ? 'typescript' : 'javascript',
        pageTitle: g.cap(words(2)),
        breadcrumb: heading,
        codeList: [{ language: 'typescript', code }],
        tokens: 90 + Math.floor(g.rand() * 60),
      };
    } else {
      const sentences = 4 + Math.floor(g.rand() * 5);
      const content = Array.from({ length: sentences }, () => `${g.cap(words(10 + Math.floor(g.rand() * 10)))}.`).join(' ');
      yield { kind: 'info', sourceId: url, content, breadcrumb: heading, pageTitle: g.cap(words(2)), tokens: 80 + Math.floor(g.rand() * 120) };
    }
  }
}

/** Sample questions: 2-4 topic words of a library mixed with common words, some phrased as how-to. */
export function sampleQuestions(m: Marker, count = 1000, seed = 42): { libraryId: string; query: string }[] {
  const g = generator(m.vocabulary, seed);
  const out: { libraryId: string; query: string }[] = [];
  for (let i = 0; i < count; i++) {
    const libraryId = g.pick(m.libraries);
    const topic = m.topics[libraryId]!;
    const k = 2 + Math.floor(g.rand() * 3);
    const words = Array.from({ length: k }, () => (g.rand() < 0.6 ? g.pick(topic) : g.pick(m.vocabulary.slice(50, 2000))));
    const query =
      g.rand() < 0.4 ? `how to ${words.join(' ')}` : g.rand() < 0.5 ? `${words[0]}${g.cap(words[1]!)} ${words.slice(2).join(' ')}`.trim() : words.join(' ');
    out.push({ libraryId, query });
  }
  return out;
}

function readMarker(dir: string): Marker | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, MARKER), 'utf8')) as Marker;
  } catch {
    return null;
  }
}

function withSamples(m: Marker, dir: string): BenchCorpus {
  const samples = sampleQuestions(m);
  return { ...m, dataDir: dir, libraryIds: m.libraries, samples, queries: samples.map((s) => s.query) };
}

/**
 * What the search-model jobs do after an import, done here for every version whose model is
 * missing or of another format (after a build, or when MODEL_FORMAT changed), so a benchmarked
 * server does not learn 200 models in the background while it is measured. `embedder` is the one
 * the served corpus is searched with (for `--vectors model`, the real sentence model).
 */
async function learnMissingModels(store: Store, embedder: Embedder | null, log: (m: string) => void): Promise<void> {
  const missing = await store.models.missing(MODEL_FORMAT);
  if (missing.length === 0) return;
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
  let done = 0;
  for (const versionId of missing) {
    const model = await learnModel(sqliteLearnSource(store), embedder, versionId);
    await store.models.put(versionId, MODEL_FORMAT, JSON.stringify(model), new Date().toISOString());
    if (++done % 20 === 0 && done < missing.length) log(`bench corpus: ranking models ${done}/${missing.length} learned (${seconds()} s)`);
  }
  log(`bench corpus: ranking models of ${missing.length} versions learned in ${seconds()} s with ${embedder?.id ?? 'no embedder'}`);
}

/**
 * Takes the lock directory of a build of `dir` (returns null), or waits while another process
 * builds it and returns the marker it wrote once it is the one wanted.
 */
async function lockForBuild(dir: string, wanted: (m: Marker | null) => m is Marker, log: (m: string) => void): Promise<Marker | null> {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      return null;
    } catch {
      log(`bench corpus: another process is building ${dir}; waiting (remove ${lock} if no build is running)`);
      await new Promise((r) => setTimeout(r, 5000));
      const m = readMarker(dir);
      if (wanted(m)) return m;
    }
  }
}

/**
 * Builds `dir` once across processes: under the lock (or, when another process built it meanwhile,
 * its marker), `build` fills a fresh `<dir>.building` and returns the marker, which is written there
 * before the folder replaces `dir` whole.
 */
async function buildOnce(
  dir: string,
  wanted: (m: Marker | null) => m is Marker,
  log: (m: string) => void,
  build: (tmp: string) => Promise<Marker>,
): Promise<BenchCorpus> {
  const built = await lockForBuild(dir, wanted, log);
  if (built) return withSamples(built, dir);
  try {
    const tmp = `${dir}.building`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    const marker = await build(tmp);
    fs.writeFileSync(path.join(tmp, MARKER), JSON.stringify(marker));
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
    return withSamples(marker, dir);
  } finally {
    fs.rmSync(`${dir}.lock`, { recursive: true, force: true });
  }
}

/** A corpus already built as wanted: the ranking models it lacks are learned (learnMissingModels), then it is used. */
async function reuseBuilt(dir: string, marker: Marker, embedder: Parameters<typeof learnMissingModels>[1], log: (m: string) => void): Promise<BenchCorpus> {
  const store = Store.open(dir);
  try {
    await learnMissingModels(store, embedder, log);
  } finally {
    store.close();
  }
  return withSamples(marker, dir);
}

/**
 * Returns the cached benchmark corpus, building it first when the cache is missing, was built by
 * another generator version, with other sizes, or with another embedder. Building takes minutes;
 * a lock directory makes concurrent callers wait for one build instead of racing.
 */
export async function ensureBenchCorpus(opts: BenchCorpusOptions = {}): Promise<BenchCorpus> {
  if (opts.vectors === 'model') return ensureModelShapedCorpus(opts);
  const dir = opts.dir ?? BENCH_CACHE_DIR;
  const libraries = opts.libraries ?? 200;
  const perLibrary = opts.perLibrary ?? 5000;
  const log = opts.log ?? ((m: string) => console.error(m));
  // The builtin word vectors: the sentence model embeds ~40 snippets a second on 2 cores, about 7 hours for
  // a million. For serving figures with the model's 384 dimensions see `--vectors model` (top of this file).
  const config = loadConfig({ dataDir: dir, logLevel: 'warn', embedProvider: 'builtin' } as never, {});
  const embedder = await createEmbedder(config, createLogger('warn'));
  const wanted = (m: Marker | null): m is Marker =>
    !!m && m.generatorVersion === GENERATOR_VERSION && m.libraries.length === libraries && m.perLibrary === perLibrary && m.embedder === (embedder?.id ?? null);
  const existing = readMarker(dir);
  if (wanted(existing)) return reuseBuilt(dir, existing, embedder, log);

  return buildOnce(dir, wanted, log, async (tmp) => {
    const vocab = vocabulary();
    const topics = libraryTopics(vocab, libraries);
    const store = Store.open(tmp);
    if (embedder) await store.vectors.ensure(embedder.id, embedder.dims);
    const writer = new LibraryWriter(store, embedder);
    const ids: string[] = [];
    const started = performance.now();
    let total = 0;
    for (let lib = 0; lib < libraries; lib++) {
      const id = `/bench/lib${String(lib).padStart(3, '0')}`;
      ids.push(id);
      const build = await writer.begin({
        id,
        title: `Bench library ${lib}`,
        description: `Synthetic library about ${topics[lib]!.slice(0, 5).join(', ')}`,
        sourceType: 'repo',
      });
      let batch: SnippetInput[] = [];
      for (const s of librarySnippets(vocab, topics[lib]!, lib, perLibrary)) {
        batch.push(s);
        if (batch.length === 2500) {
          await build.add(batch);
          batch = [];
        }
      }
      if (batch.length) await build.add(batch);
      total += (await build.commit()).snippets;
      if (lib % 10 === 9)
        log(`bench corpus: ${lib + 1}/${libraries} libraries, ${total} snippets, ${Math.round(total / ((performance.now() - started) / 1000))} snippets/s`);
    }
    await learnMissingModels(store, embedder, log);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    store.db.exec('PRAGMA optimize');
    store.close();
    const topicMap = Object.fromEntries(ids.map((id, i) => [id, topics[i]!]));
    const marker: Marker = {
      generatorVersion: GENERATOR_VERSION,
      perLibrary,
      libraries: ids,
      snippets: total,
      embedder: embedder?.id ?? null,
      topics: topicMap,
      vocabulary: vocab.slice(0, 2000),
    };
    log(`bench corpus: built ${total} snippets in ${((performance.now() - started) / 1000).toFixed(0)} s at ${dir}`);
    return marker;
  });
}

/**
 * The `--vectors model` corpus (see the top of this file): the builtin corpus's database copied,
 * its vector table recreated for the installed model's id and 384 dimensions (VectorStore.ensure,
 * as a server does when the embedder changes), filled by the embed job's own code (fillVectors)
 * with projected vectors, and the ranking models learned again with the real model asking the
 * headings (learnMissingModels), as the search-model jobs of a server running the model would.
 */
async function ensureModelShapedCorpus(opts: BenchCorpusOptions): Promise<BenchCorpus> {
  const dir = opts.dir ?? BENCH_MODEL_CACHE_DIR;
  const libraries = opts.libraries ?? 200;
  const perLibrary = opts.perLibrary ?? 5000;
  const log = opts.log ?? ((m: string) => console.error(m));
  const model = await installedModel(dir);
  try {
    const wanted = (m: Marker | null): m is Marker =>
      !!m &&
      m.generatorVersion === GENERATOR_VERSION &&
      m.libraries.length === libraries &&
      m.perLibrary === perLibrary &&
      m.embedder === model.id &&
      m.vectors?.kind === 'projected' &&
      m.vectors.version === PROJECTION_VERSION;
    const existing = readMarker(dir);
    if (wanted(existing)) return reuseBuilt(dir, existing, model, log);

    const base = await ensureBenchCorpus({ dir: opts.baseDir, libraries, perLibrary, log });
    if (path.resolve(base.dataDir) === path.resolve(dir)) throw new Error(`bench corpus: --vectors model needs its own dir, not the builtin corpus's (${dir})`);
    return await buildOnce(dir, wanted, log, async (tmp) => {
      const started = performance.now();
      const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
      // The builtin corpus is only read: checkpointed (as every benchmark run does) and copied.
      const source = Store.open(base.dataDir);
      source.db.pragma('wal_checkpoint(TRUNCATE)');
      source.close();
      fs.copyFileSync(path.join(base.dataDir, 'stacks.db'), path.join(tmp, 'stacks.db'));
      log(`bench corpus: ${base.dataDir}/stacks.db copied (${seconds()} s)`);

      const words = await createEmbedder(loadConfig({ dataDir: base.dataDir, logLevel: 'warn', embedProvider: 'builtin' } as never, {}), createLogger('warn'));
      const projected = new ProjectedEmbedder(words, model.id, model.dims);
      const store = Store.open(tmp);
      try {
        // The copied models were learned with the word vectors; a server running the model learns its own.
        store.db.exec('DELETE FROM search_models');
        await writeProjectedVectors(store, projected, (m) => log(`bench corpus: ${m} (${seconds()} s)`));
        await learnMissingModels(store, model, log);
        store.db.pragma('wal_checkpoint(TRUNCATE)');
        store.db.exec('PRAGMA optimize');
      } finally {
        store.close();
      }
      const { dataDir: _d, libraryIds: _l, samples: _s, queries: _q, ...baseMarker } = base;
      const marker: Marker = { ...baseMarker, embedder: model.id, vectors: projected.label };
      log(`bench corpus: built the --vectors model corpus (${marker.snippets} snippets) in ${seconds()} s at ${dir}`);
      return marker;
    });
  } finally {
    await model.close?.();
  }
}

/** The `--vectors` option of the benchmarks that take it. */
export function benchVectors(value: string | undefined): BenchVectors {
  if (value === undefined || value === 'builtin' || value === 'model') return value ?? 'builtin';
  throw new Error(`--vectors must be builtin or model, not ${value}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      libraries: { type: 'string' },
      'per-library': { type: 'string' },
      dir: { type: 'string' },
      vectors: { type: 'string' },
      'base-dir': { type: 'string' },
    },
    allowPositionals: true,
  });
  const c = await ensureBenchCorpus({
    dir: values.dir,
    libraries: values.libraries ? Number(values.libraries) : undefined,
    perLibrary: values['per-library'] ? Number(values['per-library']) : undefined,
    vectors: benchVectors(values.vectors),
    baseDir: values['base-dir'],
  });
  console.log(
    JSON.stringify({
      dataDir: c.dataDir,
      libraries: c.libraries.length,
      snippets: c.snippets,
      embedder: c.embedder,
      vectors: c.vectors?.note ?? "the embedder's own",
    }),
  );
}
