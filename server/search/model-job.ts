import type { JobQueue } from '../jobs/queue.ts';
import type { Embedder } from '../embed/types.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/index.ts';
import type { Stores } from '../store/stores.ts';
import { learnModel } from './learn.ts';
import { sqliteLearnSource } from './learn-source.ts';
import { learnInWorker } from './learn-thread.ts';
import { MODEL_FORMAT, type LearnedModel } from './ranker.ts';

/**
 * The `search-model` job: learns a library version's ranking model from its documents
 * (server/search/learn.ts) after the version was written, and stores it in one statement, so
 * searches switch from the default model to the learned one atomically. It runs in a worker thread
 * of its own (learn-thread.ts: hundreds of retrievals would otherwise share the request thread; an
 * in-memory database, which a worker cannot open, learns here, yielding between questions), on
 * either backend (the composition root picks sqliteLearner or postgresLearner), is
 * durable like every job (queued again after a crash or restart), and a version written again gets
 * a new job and a new model.
 */
export const SEARCH_MODEL_KIND = 'search-model';

export interface SearchModelPayload {
  versionId: number;
  libraryId: string;
}

/** Queues learning for a version unless a job for it is already queued or running (a running one left by a crash is queued again at start). */
export async function queueSearchModel(jobs: Pick<JobQueue, 'enqueueUnless'>, versionId: number, libraryId: string): Promise<number> {
  const queued = await jobs.enqueueUnless<SearchModelPayload>(
    SEARCH_MODEL_KIND,
    { versionId, libraryId },
    { libraryId },
    { kinds: [SEARCH_MODEL_KIND], limit: 200, match: (j) => j.payload.versionId === versionId },
  );
  return queued.id;
}

/** At start-up: queues every served version whose model is missing or of an older format (an upgrade, a crash before the job ran). */
export async function scheduleMissingModels(store: Pick<Stores, 'models' | 'libraries'>, jobs: JobQueue, log: Logger): Promise<number> {
  const missing = await store.models.missing(MODEL_FORMAT);
  for (const id of missing) {
    const v = await store.libraries.version(id);
    if (v) await queueSearchModel(jobs, id, v.libraryId);
  }
  if (missing.length) log.info({ versions: missing.length }, 'learning the ranking model of library versions that have none');
  return missing.length;
}

/** Learns one version's model; the job's signal cancels it. */
export type ModelLearner = (versionId: number, signal: AbortSignal) => Promise<LearnedModel>;

/** On SQLite: in a worker thread reading the file, or here for an in-memory database (which a worker cannot open). */
export function sqliteLearner(store: Store, embedder: Embedder | null, activity: SharedArrayBuffer | null): ModelLearner {
  return (versionId, signal) => {
    const file = store.file;
    return file && file !== ':memory:'
      ? learnInWorker({ backend: 'sqlite', file }, embedder, versionId, signal, activity)
      : learnModel(sqliteLearnSource(store), embedder, versionId, signal);
  };
}

/** On PostgreSQL: in a worker thread with a small pool of its own to `url`, off the request thread as on SQLite. */
export function postgresLearner(url: string, embedder: Embedder | null, activity: SharedArrayBuffer | null): ModelLearner {
  return (versionId, signal) => learnInWorker({ backend: 'postgres', url }, embedder, versionId, signal, activity);
}

export function registerSearchModelJob(jobs: Pick<JobQueue, 'register'>, s: { store: Pick<Stores, 'models' | 'libraries'>; learn: ModelLearner }): void {
  jobs.register<SearchModelPayload>(
    SEARCH_MODEL_KIND,
    async ({ job, signal, progress, log }) => {
      const { versionId } = job.payload;
      const version = await s.store.libraries.version(versionId);
      // A version replaced meanwhile has nothing to serve: its successor has its own job.
      if (!version || !version.isCurrent || version.state !== 'ready') {
        progress({ skipped: 'the version is no longer served' });
        return;
      }
      const started = Date.now();
      const model = await s.learn(versionId, signal);
      await s.store.models.put(versionId, MODEL_FORMAT, JSON.stringify(model), new Date().toISOString());
      const report = { ...model.report, source: model.source, ms: Date.now() - started };
      progress(report);
      log.info({ versionId, libraryId: version.libraryId, ...report }, 'ranking model learned');
    },
    { background: true },
  );
}
