import type { Stores } from '../store/stores.ts';
import type { Logger } from '../log.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Embedder } from './types.ts';
import { embeddingText } from './text.ts';

export const REEMBED_KIND = 'reembed';
/** Snippets embedded and stored per transaction. */
const BATCH = 256;

/**
 * The embed job: fills a vector for every snippet that has none, in id order and in batches, and
 * marks each served version complete once all its snippets have one (only then do searches use its
 * vectors). It runs after the embedder changed (the vector table was recreated empty) and, with a
 * deferred embedder (the sentence model), after every version written. It is resumable by
 * construction: a restarted run continues with the snippets still missing a vector. It builds no
 * library version: it replaces nothing served, and a version answers lexically until it is done.
 */
export function registerReembedJob(
  jobs: Pick<JobQueue, 'register' | 'enqueue'>,
  deps: { store: Pick<Stores, 'vectors' | 'snippets'>; embedder: Embedder | null },
  onCompleted: (versionIds: number[]) => Promise<void> | void = () => {},
): void {
  jobs.register<{ embedder?: string }>(
    REEMBED_KIND,
    async ({ checkCancelled, progress, othersWaiting, log }) => {
      const { embedder, store } = deps;
      if (!embedder) return;
      const started = Date.now();
      const { done, completed, yielded } = await fillVectors(store, embedder, { checkCancelled, progress, shouldYield: othersWaiting });
      log.info(
        {
          embedder: embedder.id,
          snippets: done,
          ms: Date.now() - started,
          perSecond: Math.round(done / Math.max(0.001, (Date.now() - started) / 1000)),
          yielded,
        },
        'embedding finished',
      );
      await onCompleted(completed);
      // An import or crawl waits: it goes first, this job's rest after it.
      if (yielded) await jobs.enqueue(REEMBED_KIND, { embedder: embedder.id });
    },
    // Work nobody waits for: taken when no import or crawl is queued, and it gives way to one.
    { background: true },
  );
}

/**
 * Embeds every snippet without a vector (the embed job's work; also the evaluation's and the
 * default ranker's, which write with a deferred embedder in process). Returns how many were
 * embedded, the versions completed, and whether it stopped early because `shouldYield` said so.
 */
export async function fillVectors(
  store: Pick<Stores, 'vectors' | 'snippets'>,
  embedder: Embedder,
  hooks: {
    checkCancelled?: () => void;
    progress?: (p: { embedder: string; done: number; total: number }) => void;
    shouldYield?: () => Promise<boolean> | boolean;
  } = {},
): Promise<{ done: number; completed: number[]; yielded: boolean }> {
  const total = await store.vectors.missingCount();
  let done = 0;
  let afterId = 0;
  const completed: number[] = [];
  hooks.progress?.({ embedder: embedder.id, done, total });
  for (;;) {
    hooks.checkCancelled?.();
    const batch = await store.vectors.missing(afterId, BATCH);
    if (batch.length === 0) break;
    afterId = batch[batch.length - 1]!.id;
    const snippets = await store.snippets.byIds(batch.map((b) => b.id));
    const vectors = await embedder.embed(snippets.map(embeddingText), 'background');
    done += await store.vectors.upsertBatch(snippets.map((s, i) => ({ id: s.id, versionId: s.versionId, vector: vectors[i]! })));
    // The versions this batch moved past (a version's snippets come in id order): checking the one it
    // ends in after every batch would scan a large version's rows hundreds of times.
    const last = batch[batch.length - 1]!.versionId;
    for (const versionId of new Set(batch.map((b) => b.versionId)))
      if (versionId !== last && (await store.vectors.markComplete(versionId))) completed.push(versionId);
    hooks.progress?.({ embedder: embedder.id, done, total: Math.max(total, done) });
    if (await hooks.shouldYield?.()) return { done, completed, yielded: true };
  }
  // The version the last batch ended in, and versions committed after their last snippets were embedded.
  completed.push(...(await store.vectors.markAllComplete()));
  return { done, completed, yielded: false };
}

/**
 * Queues a re-embed unless one is already queued or running. Called at startup when the vector
 * table was recreated, and when the last re-embed did not finish (failed or cancelled), so an
 * unreachable embedding endpoint does not leave snippets without vectors for good.
 */
export async function scheduleReembed(
  deps: { jobs: Pick<JobQueue, 'enqueueUnless'>; embedder: Embedder | null; log: Logger },
  reason: 'embedder changed' | 'previous run unfinished' | 'new version' | 'snippets without vectors',
): Promise<number | null> {
  const { jobs, embedder, log } = deps;
  if (!embedder) return null;
  const queued = await jobs.enqueueUnless(REEMBED_KIND, { embedder: embedder.id }, {}, { kinds: [REEMBED_KIND] });
  if (queued.created) log.info({ jobId: queued.id, embedder: embedder.id, reason }, 're-embedding queued');
  return queued.id;
}

/** True when the most recent re-embed job ended without filling the table. */
export async function lastReembedUnfinished(jobs: Pick<JobQueue, 'list'>): Promise<boolean> {
  const [last] = await jobs.list({ kind: REEMBED_KIND, limit: 1 });
  return last !== undefined && (last.state === 'failed' || last.state === 'cancelled');
}
