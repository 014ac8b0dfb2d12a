import { parentPort, workerData } from 'node:worker_threads';
import { Store } from '../store/index.ts';
import { openDb } from '../store/db.ts';
import type { Embedder } from '../embed/types.ts';
import { learnModel } from './learn.ts';
import { pgLearnSource, sqliteLearnSource, type LearnSource } from './learn-source.ts';
import { openPgPool } from '../store/pg/pool.ts';
import { PgSearchStore } from '../store/pg/search.ts';
import { PgTermStore } from '../store/pg/terms.ts';
import { PgSnippetStore } from '../store/pg/snippets.ts';
import { PgSearchModelStore } from '../store/pg/search-models.ts';
import { lowerThreadPriority } from '../../lib/thread-priority.ts';
import { waitForQuiet } from '../system/serving-activity.ts';
import type { LearnedModel } from './ranker.ts';

/**
 * A worker thread that learns one version's ranking model (server/search/learn.ts) through its own
 * connection (a read-only one to the SQLite file, or a small pool of its own to PostgreSQL), so that asking a version's headings as questions (hundreds of retrievals)
 * never runs on the request thread. The questions' vectors come from the main thread's embedder
 * (the sentence model's own workers, or the word vectors), asked for by message.
 */

/** What the worker knows of the main thread's embedder: enough to stand in for it. */
export interface EmbedderInfo {
  id: string;
  dims: number;
  sentenceEncoder: boolean;
}

/** The database the worker reads: the SQLite file (read-only), or PostgreSQL by its URL. */
export type LearnDatabase = { backend: 'sqlite'; file: string } | { backend: 'postgres'; url: string };

export interface LearnWorkerData {
  database: LearnDatabase;
  versionId: number;
  embedder: EmbedderInfo | null;
  /** Requests in flight (server/system/serving-activity.ts): each question waits for a quiet moment. */
  activity: SharedArrayBuffer | null;
}

/** Worker -> main. */
export type LearnWorkerMessage = { kind: 'embed'; id: number; texts: string[] } | { kind: 'done'; model: LearnedModel } | { kind: 'failed'; error: string };

/** Main -> worker: the vectors of an `embed` request, or why there are none. */
export type EmbedReply = { id: number; vectors: Float32Array[] } | { id: number; error: string };

const data = workerData as LearnWorkerData;
// Background work: serving gets the cores first.
lowerThreadPriority();
const pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
let nextId = 1;

parentPort!.on('message', (reply: EmbedReply) => {
  const p = pending.get(reply.id);
  if (!p) return;
  pending.delete(reply.id);
  if ('error' in reply) p.reject(new Error(reply.error));
  else p.resolve(reply.vectors);
});

const post = (m: LearnWorkerMessage) => parentPort!.postMessage(m);

const embedder: Embedder | null = data.embedder && {
  id: data.embedder.id,
  dims: data.embedder.dims,
  sentenceEncoder: data.embedder.sentenceEncoder,
  embed: (texts) =>
    new Promise<Float32Array[]>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      post({ kind: 'embed', id, texts });
    }),
};

/** The worker's own connection to the database, as learning reads it, and how to close it. */
function open(db: LearnDatabase): { source: LearnSource; close: () => Promise<void> } {
  if (db.backend === 'sqlite') {
    const store = new Store(openDb(db.file, { readonly: true }), { vectorCacheBytes: 16 * 1024 * 1024 });
    return { source: sqliteLearnSource(store), close: async () => store.close() };
  }
  // Two connections: a question's snapshot holds one; a statement sent outside it never waits behind it.
  const pool = openPgPool(db.url, { max: 2, applicationName: 'stacks learn' });
  const source = pgLearnSource({
    search: new PgSearchStore(pool, { vectorCacheBytes: 16 * 1024 * 1024 }),
    terms: new PgTermStore(pool),
    snippets: new PgSnippetStore(pool),
    models: new PgSearchModelStore(pool),
  });
  return { source, close: () => pool.end() };
}

const { source, close } = open(data.database);
try {
  // Each heading asked waits (up to QUIET_WAIT_MS) until no request is in flight.
  const pace = data.activity ? () => waitForQuiet(data.activity!) : undefined;
  post({ kind: 'done', model: await learnModel(source, embedder, data.versionId, undefined, pace) });
} catch (err) {
  post({ kind: 'failed', error: (err as Error).message });
} finally {
  await close();
}
