import { parentPort, workerData } from 'node:worker_threads';
import { Store } from '../store/index.ts';
import { openDb } from '../store/db.ts';
import { answerForVersion, type VersionAnswerOptions } from './pipeline.ts';
import type { PreparedQuery } from './query.ts';
import type { Candidate } from './retrieve.ts';

/** One retrieval request to a worker: a version resolved by the request thread and a prepared (embedded) question. */
export interface RetrievalJob {
  id: number;
  versionId: number;
  query: PreparedQuery;
  opts: VersionAnswerOptions;
}

/** stale: the version was swapped out after the request thread resolved it; resolve again. */
export type RetrievalReply = { id: number; items: Candidate[] } | { id: number; stale: true } | { id: number; error: string };

// Each worker reads through its own read-only connection to the same database file.
const store = new Store(openDb((workerData as { dbFile: string }).dbFile, { readonly: true }));

parentPort!.on('message', (job: RetrievalJob) => {
  let reply: RetrievalReply;
  try {
    reply = store.search.snapshot(() => {
      // Inside the snapshot: the version must still be the one served, or the answer would come from a retired version.
      const v = store.libraries.version(job.versionId);
      if (!v || !v.isCurrent || v.state !== 'ready') return { id: job.id, stale: true as const };
      return { id: job.id, items: answerForVersion(store, job.query, job.versionId, job.opts) };
    });
  } catch (err) {
    reply = { id: job.id, error: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
