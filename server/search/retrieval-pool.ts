import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { AnswerOptions, VersionTarget } from './pipeline.ts';
import type { PreparedQuery } from './query.ts';
import type { Candidate } from './retrieve.ts';
import type { RetrievalReply, WorkerJob, WorkerVectorStats } from './retrieval-worker.ts';
import { SharedVectorBudget, type VectorControl } from './shared-vectors.ts';
import type { VersionProbe } from '../store/search-probe.ts';

type Reply = Candidate[] | Candidate[][] | VersionProbe[] | WorkerVectorStats | 'stale';

interface Pending {
  resolve: (r: Reply) => void;
  reject: (e: Error) => void;
}

/**
 * Worker threads that run the per-version retrieval pipeline (FTS5, KNN, rerank, dedupe) off the
 * request thread. better-sqlite3 is synchronous, so without them every answer queues behind the
 * one thread; with them a 2-core box answers on both cores. Each job goes to the least busy worker.
 */
/** The worker's entry: the tsx shim beside the TypeScript source, or the compiled module in dist/. */
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './retrieval-worker.mjs' : './retrieval-worker.js', import.meta.url);

interface PoolWorker {
  /** Its number in the pool (the shared vector cache names workers by it). */
  index: number;
  worker: Worker;
  pending: Map<number, Pending>;
}

export class RetrievalPool {
  private readonly workers: PoolWorker[] = [];
  private nextId = 1;
  private closed = false;
  /** One budget for the vectors of complete versions, held once for all workers (shared-vectors.ts). */
  private readonly sharedVectors: SharedVectorBudget | null;

  /**
   * `vectorCacheBytes`: memory per worker for the vectors of recently searched versions; the workers
   * hold those of complete versions once, in a shared cache of `vectorCacheBytes` x `size`.
   * `onWorkerLost` hears why a worker left the pool (its requests then run in the request thread).
   */
  constructor(dbFile: string, size: number, vectorCacheBytes: number, onWorkerLost: (err: Error) => void = () => {}) {
    const budgetBytes = vectorCacheBytes * size;
    this.sharedVectors = budgetBytes > 0 ? new SharedVectorBudget(budgetBytes) : null;
    // A port between each two workers: the shared chunks go from worker to worker (shared-vectors.ts says why not through this thread).
    const peers = Array.from({ length: size }, () => new Map<number, MessagePort>());
    for (let i = 0; i < size; i++) {
      for (let j = i + 1; j < size; j++) {
        const { port1, port2 } = new MessageChannel();
        peers[i]!.set(j, port1);
        peers[j]!.set(i, port2);
      }
    }
    for (let i = 0; i < size; i++) {
      const sharedVectors = this.sharedVectors ? { budgetBytes, peers: peers[i]! } : null;
      // A small young generation: the KNN scan reads ~0.5 MB of vector blobs per library into Buffers
      // that only a scavenge frees, and with the default size they piled up to ~80 MB more RSS.
      const worker = new Worker(WORKER_ENTRY, {
        workerData: { dbFile, vectorCacheBytes, sharedVectors },
        transferList: [...peers[i]!.values()],
        resourceLimits: { maxYoungGenerationSizeMb: 8 },
      });
      const pending = new Map<number, Pending>();
      const entry: PoolWorker = { index: i, worker, pending };
      worker.on('message', (r: RetrievalReply) => {
        if (r.vectors && this.sharedVectors) {
          const live = this.workers.map((w) => w.index);
          for (const { to, control } of this.sharedVectors.report(i, live, r.vectors)) {
            this.workers.find((w) => w.index === to)?.worker.postMessage(control satisfies VectorControl);
          }
        }
        const p = pending.get(r.id);
        if (!p) return;
        pending.delete(r.id);
        if (pending.size === 0) worker.unref();
        if ('error' in r) p.reject(new Error(r.error));
        else p.resolve('stale' in r ? 'stale' : 'lists' in r ? r.lists : 'probes' in r ? r.probes : 'stats' in r ? r.stats : r.items);
      });
      const fail = (err: Error) => {
        // A dead worker leaves the pool; its requests fail over to the request thread.
        const i = this.workers.indexOf(entry);
        if (i >= 0) {
          this.workers.splice(i, 1);
          if (!this.closed) onWorkerLost(err);
        }
        for (const p of pending.values()) p.reject(err);
        pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`retrieval worker exited with code ${code}`)));
      // Idle workers must not keep the process alive; a worker with requests in flight must (send()
      // refs it), or a one-shot process such as `stacks search` ends before the answer arrives.
      worker.unref();
      this.workers.push(entry);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** Jobs sent and not yet answered, over all workers. */
  get pending(): number {
    return this.workers.reduce((n, w) => n + w.pending.size, 0);
  }

  /** The whole pipeline for one version (pipeline.ts answerForVersion), or 'stale' when that version is no longer the served one. */
  answer(target: VersionTarget, query: PreparedQuery, opts: AnswerOptions): Promise<Candidate[] | 'stale'> {
    return this.send({ kind: 'answer', id: 0, target, query, opts }) as Promise<Candidate[] | 'stale'>;
  }

  /**
   * The per-library stage of a /api/v3/search (pipeline.ts versionCandidates), one list per target in target order; 'stale' when a target's
   * version is no longer the served one.
   */
  search(targets: VersionTarget[], query: PreparedQuery): Promise<Candidate[][] | 'stale'> {
    return this.send({ kind: 'search', id: 0, targets, query }) as Promise<Candidate[][] | 'stale'>;
  }

  /** The whole-index probe rows of a library-less search (SearchProbeStore.topVersions), off the request thread. */
  topVersions(match: string, limit: number): Promise<VersionProbe[]> {
    return this.send({ kind: 'probe', id: 0, match, limit }) as Promise<VersionProbe[]>;
  }

  /** Each worker's shared-vector figures, in worker order (tests). */
  vectorStats(): Promise<WorkerVectorStats[]> {
    return Promise.all(this.workers.map((w) => this.send({ kind: 'stats', id: 0 }, w) as Promise<WorkerVectorStats>));
  }

  /** Bytes of the vectors the workers share. */
  get sharedVectorBytes(): number {
    return this.sharedVectors?.heldBytes ?? 0;
  }

  private send(job: WorkerJob, to?: PoolWorker): Promise<Reply> {
    if (this.closed || this.workers.length === 0) return Promise.reject(new Error('retrieval pool is closed or has no live worker'));
    const w = to ?? this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (w.pending.size === 0) w.worker.ref();
      w.pending.set(id, { resolve, reject });
      w.worker.postMessage({ ...job, id });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}
