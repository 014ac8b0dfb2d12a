import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Embedder, EmbedPriority } from './types.ts';
import type { ModelReply, ModelWorkerData } from './model-worker.ts';
import { textKey, type VectorCache } from './vector-cache.ts';

/** The shipped model as scripts/model/install-model.sh pins it (server/embed/model-pin.json). */
export interface ModelPin {
  name: string;
  dir: string;
  dims: number;
  maxTokens: number;
  license: string;
  upstream: { repo: string; revision: string; files: Record<string, string> };
  package: { name: string; version: string; wheelSha256: string };
  files: { 'model.onnx': string; 'tokenizer.json': string };
}

export function readModelPin(): ModelPin {
  return JSON.parse(fs.readFileSync(new URL('./model-pin.json', import.meta.url), 'utf8')) as ModelPin;
}

/** Why the model cannot be used: startup then falls back to the builtin word vectors and says so. */
export class ModelUnavailable extends Error {}

const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './model-worker.mjs' : './model-worker.js', import.meta.url);

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** The model folder to run: the first of `dirs` that has one (the data dir's, then the install's data/), if its files are the pinned ones. */
export function findModel(dirs: string[], pin: ModelPin): { dir: string; modelSha256: string } {
  const problems: string[] = [];
  for (const base of dirs) {
    const dir = path.join(base, 'models', pin.dir);
    const model = path.join(dir, 'model.onnx');
    const tokenizer = path.join(dir, 'tokenizer.json');
    if (!fs.existsSync(model) || !fs.existsSync(tokenizer)) {
      problems.push(`${dir}: not installed`);
      continue;
    }
    // A file that is not the pinned one is never run, and never passed over for another copy: it
    // may be damaged or replaced, and whoever put it there should hear of it.
    const got = { model: sha256(model), tokenizer: sha256(tokenizer) };
    if (got.model !== pin.files['model.onnx']) problems.push(`${model}: sha256 ${got.model}, expected ${pin.files['model.onnx']}`);
    else if (got.tokenizer !== pin.files['tokenizer.json']) problems.push(`${tokenizer}: sha256 ${got.tokenizer}, expected ${pin.files['tokenizer.json']}`);
    else return { dir, modelSha256: got.model };
    break;
  }
  throw new ModelUnavailable(`the ${pin.name} model cannot be used (${problems.join('; ')}); run ./install.sh to install it`);
}

interface Lane {
  worker: Worker;
  pending: Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>;
  ready: Promise<void>;
  failed: Error | null;
}

/**
 * The sentence-embedding model (all-MiniLM-L6-v2, int8 ONNX) run by ONNX Runtime in two worker
 * threads, so the request thread never computes: one lane for questions (one thread, answers in a
 * few milliseconds), one for the background embed job, so that a job's batches never queue in
 * front of a question.
 */
export class ModelEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  readonly deferred = true;
  readonly sentenceEncoder = true;
  /** Started on first use (the CLI's commands mostly never embed) or by load() for the server. */
  private readonly lanes: Partial<Record<EmbedPriority, Lane>> = {};
  private nextId = 1;
  /** Vectors this model file computed before (STACKS_EMBED_CACHE): their texts skip the model. */
  private cache: VectorCache | null = null;
  /**
   * The background lane's last vectors by text. Documentation repeats itself (the same example on
   * two pages, two versions of a library embedded in one run: 6% of the reference corpora's
   * snippets, each within 4,096 of its twin), and a text always gets the same vector (one per run).
   */
  private readonly recent = new RecentVectors(4096);

  private constructor(
    readonly pin: ModelPin,
    readonly dir: string,
    readonly modelSha256: string,
    private readonly backgroundThreads: number,
    private readonly activity: SharedArrayBuffer | null,
  ) {
    this.id = `model:${pin.name}:${modelSha256.slice(0, 12)}`;
    this.dims = pin.dims;
  }

  /**
   * Verifies the installed files against the pin; throws ModelUnavailable when they are missing or
   * differ. Unless `onDemand`, also starts both workers and waits until the model is loaded (the
   * server: a model that cannot load is found at start, and the first question does not wait).
   * `onDemand` (a CLI command) starts a worker at its first use: ~0.5 s and ~200 MB saved by
   * every command that embeds nothing.
   */
  static async load(
    dirs: string[],
    options: { backgroundThreads?: number; pin?: ModelPin; onDemand?: boolean; activity?: SharedArrayBuffer | null } = {},
  ): Promise<ModelEmbedder> {
    const pin = options.pin ?? readModelPin();
    const found = findModel(dirs, pin);
    const embedder = new ModelEmbedder(pin, found.dir, found.modelSha256, options.backgroundThreads ?? 1, options.activity ?? null);
    if (options.onDemand) return embedder;
    try {
      await Promise.all([embedder.laneFor('query').ready, embedder.laneFor('background').ready]);
    } catch (err) {
      await embedder.close();
      throw new ModelUnavailable(`the ${pin.name} model did not load: ${(err as Error).message}`);
    }
    return embedder;
  }

  private laneFor(priority: EmbedPriority): Lane {
    return (this.lanes[priority] ??= priority === 'query' ? this.lane(1, false) : this.lane(this.backgroundThreads, true));
  }

  private lane(threads: number, background: boolean): Lane {
    const data: ModelWorkerData = {
      modelFile: path.join(this.dir, 'model.onnx'),
      tokenizerFile: path.join(this.dir, 'tokenizer.json'),
      maxTokens: this.pin.maxTokens,
      threads,
      background,
      activity: background ? this.activity : null,
    };
    const worker = new Worker(WORKER_ENTRY, { workerData: data });
    const lane: Lane = { worker, pending: new Map(), ready: Promise.resolve(), failed: null };
    lane.ready = new Promise<void>((resolve, reject) => {
      const fail = (err: Error) => {
        lane.failed = err;
        reject(err);
        for (const p of lane.pending.values()) p.reject(err);
        lane.pending.clear();
      };
      worker.on('message', (m: ModelReply | { ready: true }) => {
        if ('ready' in m) {
          // Idle, it must not keep the process alive; but a lane started by its first text (onDemand)
          // already holds that text: unref'd now, a CLI command exited 13 before the answer came.
          if (lane.pending.size === 0) worker.unref();
          resolve();
          return;
        }
        const p = lane.pending.get(m.id);
        if (!p) return;
        lane.pending.delete(m.id);
        if (lane.pending.size === 0) worker.unref();
        if ('error' in m) p.reject(new Error(m.error));
        else p.resolve(m.vectors);
      });
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`model worker exited (code ${code})`)));
    });
    lane.ready.catch(() => {});
    return lane;
  }

  /** Uses a cache of this model file's vectors (VectorCache.open checks that it is). */
  useCache(cache: VectorCache): void {
    this.cache = cache;
  }

  async embed(texts: string[], priority: EmbedPriority = 'query'): Promise<Float32Array[]> {
    // Each text hashed once (as the vector cache keys it), for the cache, the memo and the call's repeats.
    const hashes = texts.map(textKey);
    const keys = hashes.map((h) => h.toString('latin1'));
    const memo = priority === 'background' ? this.recent : null;
    const known = hashes.map((h, i) => this.cache?.getByKey(h) ?? memo?.get(keys[i]!) ?? null);
    // Each text the model has not seen is run once, however often it repeats in the call.
    const missing = new Map<string, string>();
    texts.forEach((t, i) => known[i] === null && missing.set(keys[i]!, t));
    const computed = missing.size ? await this.run([...missing.values()], priority) : [];
    const byKey = new Map([...missing.keys()].map((k, i) => [k, computed[i]!]));
    if (memo) for (const [k, v] of byKey) memo.set(k, v);
    return known.map((v, i) => v ?? byKey.get(keys[i]!)!);
  }

  private run(texts: string[], priority: EmbedPriority): Promise<Float32Array[]> {
    const lane = this.laneFor(priority);
    if (lane.failed) return Promise.reject(lane.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      lane.pending.set(id, { resolve, reject });
      lane.worker.ref();
      lane.worker.postMessage({ id, texts });
    });
  }

  async close(): Promise<void> {
    for (const lane of Object.values(this.lanes)) {
      if (!lane) continue;
      lane.worker.removeAllListeners('exit');
      await lane.worker.terminate();
    }
  }
}

/** The last `capacity` vectors stored, by key (a Map keeps insertion order: the oldest goes first). */
class RecentVectors {
  private readonly entries = new Map<string, Float32Array>();

  constructor(private readonly capacity: number) {}

  get(key: string): Float32Array | undefined {
    return this.entries.get(key);
  }

  set(key: string, vector: Float32Array): void {
    this.entries.delete(key);
    this.entries.set(key, vector);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}
