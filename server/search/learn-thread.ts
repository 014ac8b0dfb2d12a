import { Worker } from 'node:worker_threads';
import type { Embedder } from '../embed/types.ts';
import type { LearnedModel } from './ranker.ts';
import type { EmbedReply, LearnDatabase, LearnWorkerData, LearnWorkerMessage } from './learn-worker.ts';

/** The worker's entry: the tsx shim beside the TypeScript source, or the compiled module in dist/. */
const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './learn-worker.mjs' : './learn-worker.js', import.meta.url);

/**
 * Learns a version's ranking model in a worker thread of its own (server/search/learn-worker.ts),
 * reading `database` (the SQLite file, or PostgreSQL) through its own connection and
 * answering its requests for vectors with `embedder` at background priority. `activity` (the
 * requests in flight, ServingActivity's buffer) lets it wait for quiet moments. The worker ends with
 * the job; cancelling the job (`signal`) terminates it.
 */
export function learnInWorker(
  database: LearnDatabase,
  embedder: Embedder | null,
  versionId: number,
  signal?: AbortSignal,
  activity: SharedArrayBuffer | null = null,
): Promise<LearnedModel> {
  const data: LearnWorkerData = {
    database,
    versionId,
    activity,
    embedder: embedder && { id: embedder.id, dims: embedder.dims, sentenceEncoder: !!embedder.sentenceEncoder },
  };
  const worker = new Worker(WORKER_ENTRY, { workerData: data });
  return new Promise<LearnedModel>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', abort);
      void worker.terminate();
      fn();
    };
    const abort = () => finish(() => reject(signal!.reason instanceof Error ? signal!.reason : new Error('cancelled')));
    if (signal?.aborted) return abort();
    signal?.addEventListener('abort', abort, { once: true });
    worker.on('message', (m: LearnWorkerMessage) => {
      if (m.kind === 'done') finish(() => resolve(m.model));
      else if (m.kind === 'failed') finish(() => reject(new Error(m.error)));
      else if (embedder) {
        embedder.embed(m.texts, 'background').then(
          (vectors) => !settled && worker.postMessage({ id: m.id, vectors } satisfies EmbedReply),
          (err: Error) => !settled && worker.postMessage({ id: m.id, error: err.message } satisfies EmbedReply),
        );
      }
    });
    worker.on('error', (err) => finish(() => reject(err)));
    worker.on('exit', (code) => finish(() => reject(new Error(`learning worker exited with code ${code}`))));
  });
}
