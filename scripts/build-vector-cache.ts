/**
 * Writes a vector cache of the sentence model (server/embed/vector-cache.ts): the vectors an
 * instance already computed, so that another instance (or a test) need not run the model on the
 * same texts again. Used with STACKS_EMBED_CACHE=FILE.
 *   node --import tsx scripts/build-vector-cache.ts --data-dir DIR --out FILE   an instance's vectors
 *   node --import tsx scripts/build-vector-cache.ts --corpus --out FILE         the reference corpora
 *     of test/fixtures/corpus, embedded here (about 5 minutes on 2 cores): test/fixtures/model/corpus.vcache
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { Store } from '../server/store/index.ts';
import { createEmbedder } from '../server/embed/index.ts';
import { ModelEmbedder } from '../server/embed/model.ts';
import { LibraryWriter } from '../server/ingest/writer.ts';
import { fillVectors } from '../server/embed/reembed-job.ts';
import { embeddingText } from '../server/embed/text.ts';
import { VectorCache } from '../server/embed/vector-cache.ts';
import { loadReferenceCorpora } from '../test/eval/bundles.ts';

const { values: opts } = parseArgs({ options: { 'data-dir': { type: 'string' }, corpus: { type: 'boolean' }, out: { type: 'string' } } });
if (!opts.out || (!opts['data-dir'] && !opts.corpus)) {
  console.error('usage: build-vector-cache.ts (--data-dir DIR | --corpus) --out FILE');
  process.exit(2);
}
const dataDir = opts['data-dir'] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-vcache-'));
const embedder = await createEmbedder(loadConfig({ dataDir, logLevel: 'warn', embedProvider: 'model' } as never, {}), createLogger('warn'));
if (!(embedder instanceof ModelEmbedder)) throw new Error('the sentence model is not installed: run ./install.sh');
const store = Store.open(dataDir);
try {
  // An instance's vectors are the model's only if its vector table was filled by this model file (read, never changed).
  if (opts['data-dir'] && (await store.vectors.filledBy()) !== `${embedder.id}:${embedder.dims}:int8`)
    throw new Error(`${dataDir} holds no vectors of ${embedder.id}`);
  if (opts.corpus) {
    await store.vectors.ensure(embedder.id, embedder.dims);
    const writer = new LibraryWriter(store, embedder);
    await loadReferenceCorpora(writer);
    await fillVectors(store, embedder);
  }
  const items: { text: string; vector: Float32Array }[] = [];
  for (let after = 0; ; ) {
    const page = await store.snippets.embeddedPage(after, 2000);
    if (page.length === 0) break;
    for (const { snippet, embedding } of page) items.push({ text: embeddingText(snippet), vector: embedding });
    after = page[page.length - 1]!.snippet.id;
  }
  const bytes = VectorCache.build(embedder.modelSha256, embedder.dims, items);
  fs.writeFileSync(opts.out, bytes);
  console.log(`${opts.out}: ${items.length} vectors of ${embedder.id}, ${(bytes.length / 1048576).toFixed(1)} MB`);
} finally {
  store.close();
  await embedder.close?.();
  if (!opts['data-dir']) fs.rmSync(dataDir, { recursive: true, force: true });
}
