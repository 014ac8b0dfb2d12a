import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Store } from '../server/store/index.ts';
import { LibraryWriter } from '../server/ingest/writer.ts';
import { JobCancelled, throwIfCancelled, type JobContext } from '../server/jobs/queue.ts';
import { runVersionJob, type VersionJob } from '../server/ingest/version-job.ts';
import { createLogger } from '../server/log.ts';
import type { Job, LibraryMeta, SnippetInput } from '../lib/model.ts';
import { tempDir } from './helpers/server.ts';

/** The one version-build frame of import, crawl and the sources, on a real SQLite store. */

const meta: LibraryMeta = { id: '/acme/frame', title: 'Frame', description: 'frame test', sourceType: 'repo' };
const info = (i: number): SnippetInput => ({
  kind: 'info',
  sourceId: `https://example.com/frame#s${i}`,
  content: `Section ${i} explains the frame of version builds, part ${i}.`,
});

function setup(t: { after(fn: () => void): void }) {
  const dir = tempDir();
  const store = Store.open(dir);
  t.after(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const writer = new LibraryWriter(store, null);
  let nextId = 1;
  // What the queue gives a handler; a cancel from another process reaches it as an abort of its signal (JobQueue's tick).
  const context = (controller = new AbortController()): JobContext<unknown> & { reports: Record<string, unknown>[]; controller: AbortController } => {
    const id = nextId++;
    const reports: Record<string, unknown>[] = [];
    return {
      job: { id } as Job<unknown>,
      signal: controller.signal,
      progress: (p) => reports.push(p),
      checkCancelled: () => throwIfCancelled(controller.signal),
      othersWaiting: async () => false,
      controller,
      log: createLogger('silent'),
      reports,
    };
  };
  const served = () => store.libraries.currentVersion(meta.id, '')?.totalSnippets ?? null;
  return { store, writer, context, served };
}

const job = (over: Partial<VersionJob> & Pick<VersionJob, 'produce'>): VersionJob => ({ meta, nothingIndexed: () => new Error('nothing'), ...over });

test('a build is swapped in whole at the end; progress ends with the totals; cleanup runs', async (t) => {
  const { store, writer, context, served } = setup(t);
  const ctx = context();
  let cleaned = 0;
  const totals = await runVersionJob(
    { store, writer },
    ctx,
    job({
      produce: async (sink) => {
        await sink.add([info(1), info(2), info(2)]);
        assert.equal(served(), null, 'nothing is served before the commit');
        sink.report({ phase: 'adding' }, true);
      },
      cleanup: () => void cleaned++,
    }),
  );
  assert.deepEqual(totals.snippets, 2, 'the exact duplicate is stored once');
  assert.equal(served(), 2);
  assert.equal(cleaned, 1);
  assert.deepEqual({ ...ctx.reports.at(-1), tokens: 0 }, { snippets: 2, phase: 'done', stored: 2, tokens: 0 });
});

test('a failure keeps the served version, drops the build, removes a library that never had a version, and cleans up', async (t) => {
  const { store, writer, context, served } = setup(t);
  await runVersionJob({ store, writer }, context(), job({ produce: (sink) => sink.add([info(1)]).then(() => undefined) }));
  let cleaned = 0;
  const failing = job({
    produce: async (sink) => (await sink.add([info(7), info(8)]), Promise.reject(new Error('source broke'))),
    cleanup: () => void cleaned++,
  });
  await assert.rejects(runVersionJob({ store, writer }, context(), failing), /source broke/);
  assert.equal(served(), 1, 'the previous version is still served');
  assert.equal(store.libraries.versions(meta.id).length, 1, 'the failed build is gone');
  assert.equal(cleaned, 1);

  const fresh = { ...meta, id: '/acme/never' };
  await assert.rejects(runVersionJob({ store, writer }, context(), { ...failing, meta: fresh }), /source broke/);
  assert.equal(store.libraries.get('/acme/never'), null, 'a library created for a failed first build does not linger');
  await assert.rejects(runVersionJob({ store, writer }, context(), job({ meta: fresh, produce: async () => {} })), /nothing/);
  assert.equal(store.libraries.get('/acme/never'), null, 'an empty build is refused, not swapped in');
});

test('a cancel (the queue aborts the signal) stops the build between batches', async (t) => {
  const { store, writer, context, served } = setup(t);
  const ctx = context();
  await assert.rejects(
    runVersionJob(
      { store, writer },
      ctx,
      job({
        produce: async (sink) => {
          await sink.add([info(1)]);
          ctx.controller.abort(new JobCancelled('cancelled'));
          await sink.add([info(2)]);
        },
      }),
    ),
    (err: unknown) => err instanceof JobCancelled,
  );
  assert.equal(served(), null);
  assert.equal(store.libraries.get(meta.id), null);
});

test('a shutdown keeps the build and the staged input for the rerun, which resumes it', async (t) => {
  const { store, writer, context, served } = setup(t);
  const controller = new AbortController();
  const ctx = context(controller);
  let cleaned = 0;
  await assert.rejects(
    runVersionJob(
      { store, writer },
      ctx,
      job({
        resume: true,
        produce: async (sink) => {
          await sink.add([info(1), info(2)]);
          controller.abort(new Error('shutting down'));
          sink.checkCancelled();
        },
        cleanup: () => void cleaned++,
      }),
    ),
    /shutting down/,
  );
  assert.equal(cleaned, 0, 'staged input kept');
  assert.equal(store.libraries.versions(meta.id).filter((v) => v.state === 'building').length, 1, 'the unfinished build is kept');
  // The rerun of the same job continues the build: what the first run stored counts.
  // A fresh signal and a cancel check over it, as the queue gives a rerun (the first run's check
  // would still see its aborted signal).
  const signal = new AbortController().signal;
  const rerun = { ...ctx, signal, checkCancelled: () => throwIfCancelled(signal) };
  const totals = await runVersionJob({ store, writer }, rerun, job({ resume: true, produce: (sink) => sink.add([info(2), info(3)]).then(() => undefined) }));
  assert.equal(totals.snippets, 3);
  assert.equal(served(), 3);
});

test('batches added at once (a crawl’s workers) are stored one after the other: a stored term chunk never runs ahead of a batch still being indexed', async (t) => {
  const { store, writer } = setup(t);
  const build = await writer.begin(meta, { jobId: 41 });
  const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => info(from + i));
  // The first batch ends past a term chunk (8,192 snippets): its indexing stores a chunk midway,
  // while the two small batches were already given to the build.
  await Promise.all([build.add(batch(0, 9000)), build.add(batch(9000, 100)), build.add(batch(9100, 100))]);
  const ids = (await store.snippets.list(build.versionId, 10_000)).map((s) => s.id);
  assert.equal(ids.length, 9200);
  // What a restarted job resumes from: the stored chunks must cover a prefix of the ids, or the
  // snippets between would never be indexed.
  assert.equal(await store.terms.indexedThrough(build.versionId), ids[8191]);
  const resumed = await writer.begin(meta, { jobId: 41, resume: true });
  assert.equal(resumed.versionId, build.versionId);
  await resumed.commit();
  const chunks = store.terms.chunks(build.versionId);
  assert.deepEqual(
    chunks.map((c) => [c.baseId, c.docs]),
    [
      [ids[0], 8192],
      [ids[8192], 1008],
    ],
  );
});
