// `npm run bench -- model [--runs 5] [--threads 1] [--limit N] [--max-tokens 256]`
// The sentence-embedding model (server/embed/model.ts, as ./install.sh installs it): load time and
// RSS, the latency of a 20-word question on the query lane (median and p95 per run, median of the
// runs), and the background lane's throughput over every snippet of the reference corpora
// (test/fixtures/corpus), with the time to embed them all. `--threads` is the background lane's
// ONNX Runtime threads (STACKS_EMBED_THREADS); `--max-tokens` cuts texts shorter than the pinned 256
// word pieces (what a shorter cut would save; the server always uses the pin's).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ModelEmbedder, readModelPin } from '../server/embed/model.ts';
import { embeddingText } from '../server/embed/text.ts';
import { APP_ROOT } from '../server/version.ts';
import { loadReferenceCorpora } from '../test/eval/bundles.ts';
import { Store } from '../server/store/index.ts';
import { LibraryWriter } from '../server/ingest/writer.ts';

const { values: opts } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, threads: { type: 'string', default: '1' }, limit: { type: 'string' }, 'max-tokens': { type: 'string' } },
  allowPositionals: true,
});
const runs = Number(opts.runs);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}

const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
const pin = readModelPin();
if (opts['max-tokens']) pin.maxTokens = Number(opts['max-tokens']);
const model = await ModelEmbedder.load([path.join(APP_ROOT, 'data')], { backgroundThreads: Number(opts.threads), pin });
console.log(
  `model ${model.id} (${model.dir}, texts cut at ${pin.maxTokens} word pieces): loaded in ${(performance.now() - t0).toFixed(0)} ms, RSS +${((process.memoryUsage().rss - rss0) / 1048576).toFixed(0)} MB`,
);

// Questions of about 20 words, as developers and their assistants ask them.
const questions = [
  'how do I make the server reject requests whose body is larger than a limit I choose myself',
  'what is the right way to run some code before every request handler to check the user token',
  'my tests need a fake timer so that a function scheduled with setTimeout runs at once in the test',
  'how can I validate that an object has an optional email field and a required numeric age field',
  'the cache keeps showing old data after I change something on the server how do I refresh it',
];
const medians: number[] = [];
const p95s: number[] = [];
for (let r = 0; r < runs; r++) {
  const ts: number[] = [];
  for (let i = 0; i < 100; i++) {
    const t = performance.now();
    await model.embed([questions[i % questions.length]!]);
    ts.push(performance.now() - t);
  }
  medians.push(median(ts.slice(10)));
  p95s.push(pct(ts.slice(10), 0.95));
}
console.log(
  `question of ~20 words, query lane: median ${median(medians).toFixed(2)} ms (runs: ${medians.map((m) => m.toFixed(2)).join(', ')}), p95 ${median(p95s).toFixed(2)} ms`,
);

// The corpus snippets' texts exactly as the writer stores them (a store of its own, no embedder).
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-model-'));
const store = Store.open(dataDir);
await loadReferenceCorpora(new LibraryWriter(store, null));
const texts: string[] = [];
for (let from = 1; ; from += 2000) {
  const page = store.snippets.byIds(Array.from({ length: 2000 }, (_, i) => from + i));
  if (page.length === 0) break;
  texts.push(...page.map(embeddingText));
}
store.close();
fs.rmSync(dataDir, { recursive: true, force: true });
const all = opts.limit ? texts.slice(0, Number(opts.limit)) : texts;
const t1 = performance.now();
for (let i = 0; i < all.length; i += 256) await model.embed(all.slice(i, i + 256), 'background');
const seconds = (performance.now() - t1) / 1000;
console.log(
  `background lane (${opts.threads} thread(s)): ${all.length} corpus snippets in ${seconds.toFixed(1)} s = ${(all.length / seconds).toFixed(0)} snippets/s; RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`,
);
await model.close();
