import v8 from 'node:v8';
import vm from 'node:vm';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { Store } from '../store/index.ts';
import { openDb } from '../store/db.ts';
import { answerForVersion, candidateLimits, versionCandidates, type AnswerOptions, type VersionTarget } from './pipeline.ts';
import type { PreparedQuery } from './query.ts';
import type { Candidate } from './retrieve.ts';
import { TUNING } from './tuning.ts';
import type { VersionProbe } from '../store/search-probe.ts';
import { WorkerSharedVectors, type SharedVectorReport, type VectorControl } from './shared-vectors.ts';

/** One /api/v2/context answer for a worker: a version resolved by the request thread and a prepared (embedded) question. */
export interface RetrievalJob {
  kind: 'answer';
  id: number;
  target: VersionTarget;
  query: PreparedQuery;
  opts: AnswerOptions;
}

/** The per-library stage of a /api/v3/search: each target's candidates (ranking and shaping stay in the request thread). */
export interface SearchJob {
  kind: 'search';
  id: number;
  targets: VersionTarget[];
  query: PreparedQuery;
}

/** The whole-index probe of a library-less /api/v3/search (server/search/select.ts probeMatchFor). */
export interface ProbeJob {
  kind: 'probe';
  id: number;
  match: string;
  limit: number;
}

/** Asks a worker how many versions it read out of SQLite for the shared vector cache (tests). */
export interface StatsJob {
  kind: 'stats';
  id: number;
}

export type WorkerJob = RetrievalJob | SearchJob | ProbeJob | StatsJob;

/** stale: a version was swapped out after the request thread resolved it; resolve again. */
export type RetrievalReply = (
  | { id: number; items: Candidate[] }
  | { id: number; lists: Candidate[][] }
  | { id: number; probes: VersionProbe[] }
  | { id: number; stats: WorkerVectorStats }
  | { id: number; stale: true }
  | { id: number; error: string }
) & { vectors?: SharedVectorReport };

export interface WorkerVectorStats {
  /** Versions read out of SQLite into the shared cache. */
  sharedLoads: number;
  /** Bytes of shared chunks this worker can scan. */
  sharedBytes: number;
}

/** V8's full collection, for the shared vectors this worker let go (shared-vectors.ts WorkerSharedVectors.remove says why). */
function fullCollection(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

// Each worker reads through its own read-only connection to the same database file; the chunks of
// complete versions are shared with the other workers through the pool (shared-vectors.ts).
const { dbFile, vectorCacheBytes, sharedVectors } = workerData as {
  dbFile: string;
  vectorCacheBytes: number;
  /** The pool's budget for the shared chunks and a port to each other worker, by number; absent when the cache is off. */
  sharedVectors: { budgetBytes: number; peers: Map<number, MessagePort> } | null;
};
const shared = sharedVectors ? new WorkerSharedVectors(sharedVectors.peers, sharedVectors.budgetBytes, fullCollection()) : null;
const store = new Store(openDb(dbFile, { readonly: true }), { vectorCacheBytes, ...(shared ? { sharedVectors: shared } : {}) });

/** Inside the snapshot: the version must still be the one served, or the answer would come from a retired version. */
function served(versionId: number): boolean {
  const v = store.libraries.version(versionId);
  return !!v && v.isCurrent && v.state === 'ready';
}

function searchLists(job: SearchJob): Candidate[][] {
  const limits = candidateLimits(job.targets.length);
  return job.targets.map((t) => versionCandidates(store, job.query, t, limits));
}

parentPort!.on('message', (job: WorkerJob | VectorControl) => {
  if (job.kind === 'vectors') {
    shared?.apply(job);
    return;
  }
  if (job.kind === 'stats') {
    parentPort!.postMessage({ id: job.id, stats: { sharedLoads: shared?.loads ?? 0, sharedBytes: shared?.heldBytes ?? 0 } } satisfies RetrievalReply);
    return;
  }
  let reply: RetrievalReply;
  try {
    reply = store.search.snapshot((): RetrievalReply => {
      if (job.kind === 'probe') return { id: job.id, probes: store.probe.topVersions(job.match, job.limit, TUNING.selection.probePerVersion) };
      if (job.kind === 'search') {
        if (!job.targets.every((t) => served(t.versionId))) return { id: job.id, stale: true };
        return { id: job.id, lists: searchLists(job) };
      }
      if (!served(job.target.versionId)) return { id: job.id, stale: true };
      return { id: job.id, items: answerForVersion(store, job.query, job.target, job.opts) };
    });
  } catch (err) {
    reply = { id: job.id, error: (err as Error).message };
  }
  const vectors = shared?.report();
  parentPort!.postMessage(vectors ? { ...reply, vectors } : reply);
});
