// `npm run bench -- knn [--rounds 5] [--k 30] [--dir DIR]`
// The vector KNN of one library version on the 1M bench corpus (bench/corpus.ts; 5,000 vectors per
// version): sqlite-vec's own KNN (`MATCH`) against the chunk scan with the SIMD kernel that
// `SearchStore.knn` uses (lib/vector/int8-l2.wat), in the same process and read-only connection
// settings as a retrieval worker, alternated per question. Prints ms per KNN, the ratio, and how
// often both return the same ids in the same order.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDb } from '../server/store/db.ts';
import { Store } from '../server/store/index.ts';
import { int8Unit } from '../lib/vector/quantize.ts';
import { loadBuiltin } from '../server/embed/index.ts';
import { createLogger } from '../server/log.ts';
import { ensureBenchCorpus } from './corpus.ts';
import { percentile } from './stats.ts';

const { values: opts } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, k: { type: 'string', default: '30' }, dir: { type: 'string' } },
  allowPositionals: true,
});
const rounds = Number(opts.rounds);
const k = Number(opts.k);

const corpus = await ensureBenchCorpus({ dir: opts.dir });
const db = openDb(path.join(corpus.dataDir, 'stacks.db'), { readonly: true });
const store = new Store(db);
const embedder = await loadBuiltin(corpus.dataDir, createLogger('warn'));
const versions = store.libraries.allCurrentVersions().map((v) => v.id);
const questions = corpus.queries.slice(0, 200);
const vectors = await embedder.embed(questions);
// The bench measures vec0 itself, so its statement is written here (product SQL lives in server/store/).
const vec0 = db.prepare('SELECT rowid AS id, distance FROM snippet_vec WHERE embedding MATCH vec_int8(?) AND k = ? AND version_id = ?');

console.log(`corpus: ${corpus.snippets} snippets, ${versions.length} versions; ${questions.length} questions x ${rounds} rounds, k=${k}`);
const medians: { vec0: number; scan: number }[] = [];
let same = 0;
let sameDistances = 0;
let compared = 0;
for (let round = 0; round < rounds; round++) {
  const tVec0: number[] = [];
  const tScan: number[] = [];
  vectors.forEach((v, i) => {
    const versionId = versions[(i * 7 + round * 13) % versions.length]!;
    const q = int8Unit(v);
    // Alternate which one runs first, so neither always finds the pages the other just read.
    const order = i % 2 === 0 ? (['vec0', 'scan'] as const) : (['scan', 'vec0'] as const);
    const ids: Record<string, number[]> = {};
    const dist: Record<string, number[]> = {};
    for (const which of order) {
      const t0 = performance.now();
      const hits = which === 'vec0' ? (vec0.all(q, k, BigInt(versionId)) as { id: number; distance: number }[]) : store.search.scan(versionId, q, k);
      (which === 'vec0' ? tVec0 : tScan).push(performance.now() - t0);
      if (!hits) throw new Error('the chunk scan did not apply to this table');
      ids[which] = hits.map((h) => h.id);
      dist[which] = hits.map((h) => h.distance);
    }
    compared++;
    if (ids.vec0!.join() === ids.scan!.join()) same++;
    // vec0 sums squares in float, the kernel in integers: equal within rounding.
    if (dist.vec0!.length === dist.scan!.length && dist.vec0!.every((d, j) => Math.abs(d - dist.scan![j]!) < 1e-3)) sameDistances++;
  });
  const m = {
    vec0: percentile(
      tVec0.sort((a, b) => a - b),
      50,
    ),
    scan: percentile(
      tScan.sort((a, b) => a - b),
      50,
    ),
  };
  medians.push(m);
  console.log(`round ${round + 1}: vec0 MATCH ${m.vec0.toFixed(3)} ms, chunk scan ${m.scan.toFixed(3)} ms per KNN (ratio ${(m.vec0 / m.scan).toFixed(2)})`);
}
const mid = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
console.log(
  `median of ${rounds} rounds: vec0 MATCH ${mid(medians.map((m) => m.vec0)).toFixed(3)} ms, chunk scan ${mid(medians.map((m) => m.scan)).toFixed(3)} ms, ` +
    `ratio ${mid(medians.map((m) => m.vec0 / m.scan)).toFixed(2)}; same ids in the same order: ${((100 * same) / compared).toFixed(1)}% of ${compared}, ` +
    `same distance at every rank: ${((100 * sameDistances) / compared).toFixed(1)}% (so other differences are the order of equal distances)`,
);
db.close();
