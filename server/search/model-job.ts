import type { JobQueue } from '../jobs/queue.ts';
import type { Embedder } from '../embed/types.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/index.ts';
import type { Stores } from '../store/stores.ts';
import { learnModel } from './learn.ts';
import { learnInWorker } from './learn-thread.ts';
import { MODEL_FORMAT } from './ranker.ts';

/**
 * The `search-model` job: learns a library version's ranking model from its documents
 * (server/search/learn.ts) after the version was written, and stores it in one statement, so
 * searches switch from the default model to the learned one atomically. It runs in a worker thread
 * of its own (learn-thread.ts: hundreds of retrievals would otherwise share the request thread; an
 * in-memory database, which a worker cannot open, learns here, yielding between questions), is
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
export async function scheduleMissingModels(store: Stores, jobs: JobQueue, log: Logger): Promise<number> {
  const missing = await store.models.missing(MODEL_FORMAT);
  for (const id of missing) {
    const v = await store.libraries.version(id);
    if (v) await queueSearchModel(jobs, id, v.libraryId);
  }
  if (missing.length) log.info({ versions: missing.length }, 'learning the ranking model of library versions that have none');
  return missing.length;
}

export function registerSearchModelJob(
  jobs: Pick<JobQueue, 'register'>,
  s: { store: Store; embedder: Embedder | null; activity: SharedArrayBuffer | null },
): void {
  jobs.register<SearchModelPayload>(
    SEARCH_MODEL_KIND,
    async ({ job, signal, progress, log }) => {
      const { versionId } = job.payload;
      const version = s.store.libraries.version(versionId);
      // A version replaced meanwhile has nothing to serve: its successor has its own job.
      if (!version || !version.isCurrent || version.state !== 'ready') {
        progress({ skipped: 'the version is no longer served' });
        return;
      }
      const started = Date.now();
      const file = s.store.file;
      const model =
        file && file !== ':memory:'
          ? await learnInWorker(file, s.embedder, versionId, signal, s.activity)
          : await learnModel(s.store, s.embedder, versionId, signal);
      await s.store.models.put(versionId, MODEL_FORMAT, JSON.stringify(model), new Date().toISOString());
      const report = { ...model.report, source: model.source, ms: Date.now() - started };
      progress(report);
      log.info({ versionId, libraryId: version.libraryId, ...report }, 'ranking model learned');
    },
    { background: true },
  );
}
