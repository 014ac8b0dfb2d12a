import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tempDir, waitFor } from './helpers/server.ts';
import type { Embedder } from '../server/embed/types.ts';
import type { SnippetInput } from '../lib/model.ts';
import { Store } from '../server/store/index.ts';
import { embeddingText } from '../server/embed/text.ts';
import { REEMBED_KIND } from '../server/embed/reembed-job.ts';
import type { Services } from '../server/services.ts';

/** A second, different embedder: words hashed into 32 signed buckets. Deterministic and real, just small. */
class HashEmbedder implements Embedder {
  calls = 0;
  constructor(
    readonly id = 'test:hash32',
    readonly dims = 32,
  ) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((t) => {
      const v = new Float32Array(this.dims);
      for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
        let h = 2166136261;
        for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
        v[(h >>> 0) % this.dims] += h & 1 ? 1 : -1;
      }
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    });
  }
}

const topics = [
  'install the package with npm',
  'configure the router',
  'connect to the database',
  'render a list of items',
  'handle errors in middleware',
  'write unit tests',
  'deploy with docker',
  'cache responses',
];
const snippets: SnippetInput[] = Array.from({ length: 40 }, (_, i) =>
  i % 2
    ? {
        kind: 'info',
        sourceId: `https://docs.test/page${i}`,
        content: `How to ${topics[i % topics.length]} (section ${i}).`,
        breadcrumb: `Guide > Part ${i}`,
        pageTitle: 'Guide',
      }
    : {
        kind: 'code',
        sourceId: `https://docs.test/code${i}`,
        title: `Example ${i}: ${topics[i % topics.length]}`,
        description: `Shows how to ${topics[i % topics.length]}.`,
        language: 'js',
        pageTitle: 'Examples',
        codeList: [{ language: 'js', code: `app.step${i}()` }],
      },
);

function reembedJobs(s: Services) {
  return s.jobs.list({ kind: REEMBED_KIND });
}

test('changing the embedder re-embeds every snippet through a job; an interrupted job resumes', async () => {
  const dataDir = tempDir();
  // 1. Builtin embedder: an import writes vectors directly, no re-embed needed.
  const first = await startTestServer({ dataDir });
  let versionId: number;
  try {
    assert.equal(first.services.embedder?.id, 'builtin:wink-sg-100d:v1');
    const build = await first.services.writer.begin({ id: '/test/embed', title: 'Embed test', description: '', sourceType: 'repo' });
    await build.add(snippets);
    await build.commit();
    versionId = build.versionId;
    assert.equal(await first.services.store.vectors.missingCount(), 0);
    assert.equal((await reembedJobs(first.services)).length, 0, 'a fresh data dir needs no re-embed');
    const [q] = await first.services.embedder!.embed(['connect to the database']);
    assert.equal(first.services.store.search.knn(versionId, q!, 3).length, 3);
  } finally {
    await first.close();
  }

  // 2. Restart with another embedder: the table is recreated at 32 dims and a job refills it.
  const hash = new HashEmbedder();
  const second = await startTestServer({ dataDir, overrides: { embedder: hash } });
  try {
    const job = (await waitFor(async () => (await reembedJobs(second.services)).find((j) => j.state === 'succeeded' || j.state === 'failed'), 30_000))!;
    assert.equal(job.state, 'succeeded', job.error ?? '');
    assert.deepEqual(job.progress, { embedder: 'test:hash32', done: 40, total: 40 });
    assert.equal(await second.services.store.vectors.missingCount(), 0);
    assert.ok(hash.calls > 0);
    // The refilled vectors are the new embedder's: each snippet's own text finds it first.
    const stored = await second.services.store.snippets.list(versionId, 100);
    assert.equal(stored.length, 40);
    for (const s of stored.slice(0, 5)) {
      const [v] = await hash.embed([embeddingText(s)]);
      assert.equal(second.services.store.search.knn(versionId, v!, 1)[0]!.id, s.id);
    }
    // The copies in the snippet rows were cleared with the old table and written again with the new vectors.
    const copies = second.services.store.snippets.withEmbeddings(stored.map((s) => s.id)).embeddings;
    assert.equal(copies.size, 40);
    assert.ok([...copies.values()].every((v) => v.length === 32));
  } finally {
    await second.close();
  }

  // 3. Simulate a crash halfway through a re-embed back to the builtin embedder: the table was
  //    recreated, 15 vectors written, the job left 'running'.
  const store = Store.open(dataDir);
  let crashedJobId: number;
  try {
    assert.equal(await store.vectors.ensure('builtin:wink-sg-100d:v1', 100), true);
    const third = await startTestServer({ dataDir: tempDir() });
    const builtin = third.services.embedder!;
    await third.close();
    const firstFifteen = await store.snippets.list(versionId, 15);
    const vectors = await builtin.embed(firstFifteen.map(embeddingText));
    assert.equal(await store.vectors.upsertBatch(firstFifteen.map((s, i) => ({ id: s.id, versionId, vector: vectors[i]! }))), 15);
    assert.equal(await store.vectors.missingCount(), 25);
    crashedJobId = await store.jobs.insert(REEMBED_KIND, { embedder: builtin.id }, null, null, new Date().toISOString());
    assert.equal((await store.jobs.claim([REEMBED_KIND], 'a-process-that-crashed', new Date().toISOString()))?.id, crashedJobId);
  } finally {
    store.close();
  }
  const fourth = await startTestServer({ dataDir });
  try {
    const job = (await waitFor(async () => {
      const j = fourth.services.jobs.get(crashedJobId);
      return (await j).state === 'succeeded' || (await j).state === 'failed' ? j : null;
    }, 30_000))!;
    assert.equal(job.state, 'succeeded', job.error ?? '');
    assert.equal(job.attempts, 2, 'the interrupted run was taken up again');
    assert.deepEqual(job.progress, { embedder: 'builtin:wink-sg-100d:v1', done: 25, total: 25 }, 'only the missing vectors were embedded');
    assert.equal((await reembedJobs(fourth.services)).length, 2, 'no duplicate job was queued');
    assert.equal(await fourth.services.store.vectors.missingCount(), 0);
    const [q] = await fourth.services.embedder!.embed(['connect to the database']);
    const hits = fourth.services.store.snippets.byIds(fourth.services.store.search.knn(versionId, q!, 2).map((h) => h.id));
    assert.ok(
      hits.every((h) => `${h.title} ${h.content}`.includes('database')),
      'vector search works again with the builtin embedder',
    );
  } finally {
    await fourth.close();
  }
});

test('a failed re-embed is queued again at the next start', async () => {
  const dataDir = tempDir();
  const first = await startTestServer({ dataDir });
  try {
    const build = await first.services.writer.begin({ id: '/test/embed2', title: 'Embed test 2', description: '', sourceType: 'repo' });
    await build.add(snippets.slice(0, 6));
    await build.commit();
  } finally {
    await first.close();
  }
  // An embedder whose endpoint is down: the job fails and says why.
  const broken: Embedder = { id: 'test:down', dims: 16, embed: async () => Promise.reject(new Error('endpoint unreachable')) };
  const second = await startTestServer({ dataDir, overrides: { embedder: broken } });
  try {
    const job = (await waitFor(async () => (await reembedJobs(second.services)).find((j) => j.state === 'failed'), 30_000))!;
    assert.match(job.error ?? '', /endpoint unreachable/);
    assert.equal(await second.services.store.vectors.missingCount(), 6);
  } finally {
    await second.close();
  }
  // Same embedder id as the failed run (its endpoint is back): the table is unchanged, but the
  // unfinished run is queued again and fills it.
  const third = await startTestServer({ dataDir, overrides: { embedder: new HashEmbedder('test:down', 16) } });
  try {
    const jobs = reembedJobs(third.services);
    assert.equal((await jobs).length, 2, 'one new job for the unfinished run');
    const job = (await waitFor(async () => {
      const j = await third.services.jobs.get((await jobs)[0]!.id);
      return (await j).state === 'succeeded' || (await j).state === 'failed' ? j : null;
    }, 30_000))!;
    assert.equal(job.state, 'succeeded', job.error ?? '');
    assert.equal(job.progress.done, 6);
    assert.equal(await third.services.store.vectors.missingCount(), 0);
  } finally {
    await third.close();
  }
  // Nothing unfinished any more: a further start queues nothing.
  const fourth = await startTestServer({ dataDir, overrides: { embedder: new HashEmbedder('test:down', 16) } });
  try {
    assert.equal((await reembedJobs(fourth.services)).length, 2);
  } finally {
    await fourth.close();
  }
});
