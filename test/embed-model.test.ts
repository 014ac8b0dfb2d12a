import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REAL_MODEL, runStacks, startTestServer, tempDir, waitFor } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import { VectorCache } from '../server/embed/vector-cache.ts';
import { embeddingText } from '../server/embed/text.ts';
import { Store } from '../server/store/index.ts';
import { LibraryWriter } from '../server/ingest/writer.ts';
import { bundlePath, loadBundleFile } from './eval/bundles.ts';
import { createEmbedder, describeEmbedder, selfCheck } from '../server/embed/index.ts';
import { ModelEmbedder, ModelUnavailable, readModelPin } from '../server/embed/model.ts';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { APP_ROOT } from '../server/version.ts';

// The real model, as ./install.sh installs it into data/models (no stand-in: these tests fail without it).
const pin = readModelPin();
const installed = path.join(APP_ROOT, 'data');
const log = createLogger('silent');
const reference = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'fixtures/model/reference.json'), 'utf8')) as {
  texts: string[];
  vectors: number[][];
};

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

test('the installed model is the pinned one and reproduces the reference pipeline (Hugging Face tokenizers + onnxruntime in Python)', async (t) => {
  assert.ok(fs.existsSync(path.join(installed, 'models', pin.dir, 'model.onnx')), 'the model is not installed: run ./install.sh');
  const model = await ModelEmbedder.load([installed]);
  t.after(() => model.close());
  assert.equal(model.modelSha256, pin.files['model.onnx']);
  assert.equal(model.dims, 384);
  assert.match(model.id, /^model:all-MiniLM-L6-v2:[0-9a-f]{12}$/);
  await selfCheck(model);
  // Both lanes, one text at a time and in a batch of mixed lengths: the same text gives the same vector
  // either way; a text repeated in the batch (embedded once) gets it at each place.
  const one = await Promise.all(reference.texts.map((text) => model.embed([text]).then((v) => v[0]!)));
  const n = reference.texts.length;
  const batch = await model.embed([...reference.texts, ...[...reference.texts].reverse()], 'background');
  reference.vectors.forEach((want, i) => {
    assert.ok(Math.abs(dot(one[i]!, one[i]!) - 1) < 1e-4, 'unit length');
    assert.ok(dot(one[i]!, want) > 0.9999, `text ${i}: cosine to the reference ${dot(one[i]!, want)}`);
    assert.ok(dot(batch[i]!, want) > 0.9999, `text ${i} in a batch: cosine to the reference ${dot(batch[i]!, want)}`);
    assert.ok(dot(batch[2 * n - 1 - i]!, want) > 0.9999, `text ${i} repeated in a batch: cosine to the reference ${dot(batch[2 * n - 1 - i]!, want)}`);
  });
  // Word knowledge the builtin vectors lack: a need phrased unlike the answer is still near it.
  const [need, answer, other] = await model.embed([
    'stop the server from accepting huge request payloads',
    'bodyLimit: maximum request body size in bytes',
    'render a list of items in a template',
  ]);
  assert.ok(dot(need!, answer!) > dot(need!, other!) + 0.1, `${dot(need!, answer!)} vs ${dot(need!, other!)}`);
});

test('a model file that is not the pinned one is never run: the server falls back to the word vectors and says why', async (t) => {
  const dataDir = tempDir();
  const dir = path.join(dataDir, 'models', pin.dir);
  fs.mkdirSync(dir, { recursive: true });
  const bytes = fs.readFileSync(path.join(installed, 'models', pin.dir, 'model.onnx'));
  bytes[bytes.length - 1] ^= 1;
  fs.writeFileSync(path.join(dir, 'model.onnx'), bytes);
  fs.copyFileSync(path.join(installed, 'models', pin.dir, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
  // The data dir's copy is looked at first; a damaged copy there is refused, not skipped for the install's.
  await assert.rejects(ModelEmbedder.load([dataDir]), (err: Error) => err instanceof ModelUnavailable && /sha256 [0-9a-f]{64}, expected/.test(err.message));
  const embedder = await createEmbedder(loadConfig({ dataDir: path.join(dataDir, 'elsewhere'), embedProvider: 'model' }, {}), log);
  t.after(() => embedder.close?.());
  assert.equal(describeEmbedder(embedder).model?.sha256, pin.files['model.onnx'], "an empty data dir uses the install's model");
  const s = await startTestServer({ dataDir, config: { embedProvider: 'model' } });
  t.after(() => s.close());
  const health = (await (await s.api('/api/health', { auth: null })).json()) as { embedder: { id: string; model: unknown; fallback: string } };
  assert.match(health.embedder.id, /^builtin:/);
  assert.equal(health.embedder.model, null);
  assert.match(health.embedder.fallback, /model\.onnx: sha256 [0-9a-f]{64}, expected/);
});

test('a command that starts the model on demand stays alive until its question is embedded (stacks search printed nothing and exited 13)', async () => {
  const s = await startTestServer();
  try {
    await loadSearchCorpus(s.services, ['pino']);
  } finally {
    await s.close();
  }
  // The query lane starts with the question already waiting: its ready message must not let the process go.
  const r = await runStacks(['search', 'create', 'a', 'child', 'logger', '-l', 'pino', '--data-dir', s.dataDir], {
    STACKS_DEV: '1',
    STACKS_EMBED_PROVIDER: 'model',
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^### /);
});

test("with the model, imports are lexical-first: the embed job completes a version's vectors, health counts them, and a re-import reuses them", async (t) => {
  const s = await startTestServer({ config: { embedProvider: 'model' } });
  t.after(() => s.close());
  type Health = { embedder: { id: string; model: { sha256: string; license: string }; fallback: null; versions: { embedded: number; pending: number } } };
  const before = (await (await s.api('/api/health', { auth: null })).json()) as Health;
  assert.equal(before.embedder.model.sha256, pin.files['model.onnx']);
  assert.equal(before.embedder.model.license, 'Apache-2.0');
  assert.equal(before.embedder.fallback, null);
  const form = new FormData();
  form.append(
    'bundleFile',
    new Blob([fs.readFileSync(path.join(import.meta.dirname, 'fixtures/bundles/valid.json'))], { type: 'application/json' }),
    'valid.json',
  );
  const res = await s.api('/api/import-libraries', { method: 'POST', body: form });
  assert.equal(res.status, 200, await res.clone().text());
  const version = await waitFor(() => s.services.store.libraries.allCurrentVersions().find((v) => v.libraryId === '/sindresorhus/got' && v.state === 'ready'));
  const embedJob = await waitFor(async () => (await s.services.jobs.list({ kind: 'reembed' }))[0]);
  await waitFor(async () => ['succeeded', 'failed'].includes((await s.services.jobs.get(embedJob.id)).state), 60_000);
  assert.equal((await s.services.jobs.get(embedJob.id)).state, 'succeeded');
  assert.equal(await s.services.store.vectors.missingCount(), 0);
  assert.ok(s.services.store.search.vectorsReady(version!.id));
  const after = (await (await s.api('/api/health', { auth: null })).json()) as Health;
  assert.deepEqual(after.embedder.versions, { embedded: 2, pending: 0 });
  const answer = await s.api('/api/v2/context?libraryId=/sindresorhus/got&query=send+json+in+a+post+request&type=json', { auth: null });
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('x-stacks-vectors'), 'ready');
  // The same bundle again: every text is unchanged, so the new version keeps the old vectors and is complete when it is swapped in.
  form.append('force', 'true');
  const again = await s.api('/api/import-libraries', { method: 'POST', body: form });
  assert.equal(again.status, 200);
  const next = await waitFor(() => s.services.store.libraries.allCurrentVersions().find((v) => v.libraryId === '/sindresorhus/got' && v.id !== version!.id));
  assert.ok(s.services.store.search.vectorsReady(next!.id), 'the re-imported version reused the vectors of the unchanged text');
});

test('the vector cache of the reference corpora holds what the model computes for their texts', async (t) => {
  const model = await ModelEmbedder.load([installed]);
  t.after(() => model.close());
  const cache = VectorCache.open(REAL_MODEL.embedCache, model.modelSha256, model.dims);
  // The texts exactly as the writer stores them (a store of its own, no embedder).
  const store = Store.open(tempDir());
  t.after(() => store.close());
  await loadBundleFile(new LibraryWriter(store, null), bundlePath('pino'));
  const texts = store.snippets.byIds(Array.from({ length: 2000 }, (_, i) => i + 1)).map(embeddingText);
  assert.ok(texts.length > 300);
  assert.deepEqual(
    texts.filter((x) => cache.get(x) === null),
    [],
    'every pino text is in the cache',
  );
  const sample = texts.filter((_, i) => i % 20 === 0);
  const fresh = await model.embed(sample, 'background');
  sample.forEach((text, i) =>
    assert.ok(dot(cache.get(text)!, fresh[i]!) > 0.999, `cached vector of ${JSON.stringify(text.slice(0, 60))}: cosine ${dot(cache.get(text)!, fresh[i]!)}`),
  );
  // The embedder answers cached texts from the cache, the rest from the model, in order.
  model.useCache(cache);
  const mixed = await model.embed([sample[0]!, 'a sentence no corpus holds', sample[1]!]);
  assert.ok(dot(mixed[0]!, cache.get(sample[0]!)!) > 0.99999 && dot(mixed[2]!, cache.get(sample[1]!)!) > 0.99999);
  assert.ok(dot(mixed[1]!, mixed[1]!) > 0.999 && dot(mixed[1]!, mixed[0]!) < 0.9);
  // A cache of another model file, or a damaged one, is refused.
  assert.throws(() => VectorCache.open(REAL_MODEL.embedCache, 'f'.repeat(64), model.dims), /holds vectors of model/);
  const cut = path.join(tempDir(), 'cut.vcache');
  fs.writeFileSync(cut, fs.readFileSync(REAL_MODEL.embedCache).subarray(0, 5000));
  assert.throws(() => VectorCache.open(cut, model.modelSha256, model.dims), /cut short/);
});

test('the embed job gives way to an import queued while it runs, then goes on where it stopped', async (t) => {
  const s = await startTestServer({ config: { embedProvider: 'model' } });
  t.after(() => s.close());
  // Pino's docs cut to 270 snippets: more than one batch of the job's 256, whose first takes the model
  // a few seconds (queue an import meanwhile); the whole 405 only cost 135 more texts after the import.
  const doc = JSON.parse(fs.readFileSync(bundlePath('pino'), 'utf8')) as { libraries: { codeSnippets: unknown[]; infoSnippets: unknown[] }[] };
  for (const lib of doc.libraries) {
    lib.codeSnippets = lib.codeSnippets.slice(0, 135);
    lib.infoSnippets = lib.infoSnippets.slice(0, 135);
  }
  const cut = path.join(tempDir(), 'pino-270.json');
  fs.writeFileSync(cut, JSON.stringify(doc));
  assert.deepEqual(await loadBundleFile(s.services.writer, cut), [{ id: '/pinojs/pino', tag: '', snippets: 270 }]);
  const first = await waitFor(async () => (await s.services.jobs.list({ kind: 'reembed', state: 'running' }))[0]);
  const form = new FormData();
  form.append(
    'bundleFile',
    new Blob([fs.readFileSync(path.join(import.meta.dirname, 'fixtures/bundles/valid.json'))], { type: 'application/json' }),
    'valid.json',
  );
  assert.equal((await s.api('/api/import-libraries', { method: 'POST', body: form })).status, 200);
  await s.services.jobs.idle();
  const embeds = (await s.services.jobs.list({ kind: 'reembed' })).sort((a, b) => a.id - b.id);
  const imported = s.services.jobs.list({ kind: 'import' });
  assert.ok(embeds.length >= 2, 'the first run stopped for the import and queued the rest');
  assert.ok(embeds.every((j) => j.state === 'succeeded'));
  assert.equal(embeds[0]!.id, first.id);
  const stopped = embeds[0]!.progress as { done: number; total: number };
  assert.ok(stopped.done > 0 && stopped.done < stopped.total, `the first run stopped part way: ${JSON.stringify(stopped)}`);
  assert.ok(
    (await imported).every((j) => j.state === 'succeeded' && j.finishedAt! <= embeds[embeds.length - 1]!.finishedAt!),
    'the import ran before the embedding finished',
  );
  assert.equal(await s.services.store.vectors.missingCount(), 0);
  assert.deepEqual(await s.services.store.vectors.versionCounts(), { embedded: 3, pending: 0 });
});
