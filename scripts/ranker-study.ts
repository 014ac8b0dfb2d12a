/**
 * How far the ranking features can go, on the dev split of test/eval (docs/retrieval.md, "Nov 25
 * (night)"). Each single-library dev question is retrieved in process as the pipeline does (the 50
 * candidates the ranker sees), and the linear ranker is scored with three sets of weights:
 *   - the default model (server/search/ranker-defaults.ts);
 *   - weights learned from the headings of the same versions, pooled, as the search-model job learns;
 *   - weights fitted on the dev questions themselves, 5-fold cross-validated (an upper bound for
 *     these features: no procedure that learns from the documents can do better on average).
 * It prints MRR@10, hit@1 and hit@5 overall and for paraphrases, and how often the answer is among
 * the candidates at all. Blind and fresh questions are never read.
 *   node --import tsx scripts/ranker-study.ts
 */
import fs from 'node:fs';
import { loadCorpus } from '../test/eval/corpus.ts';
import type { Store } from '../server/store/index.ts';
import type { Services } from '../server/services.ts';
import { ALL_BUNDLES } from '../test/eval/http.ts';
import { loadQuestions, relevant } from '../test/eval/question-set.ts';
import { prepareQuery } from '../server/search/query.ts';
import { retrievePrepared } from '../server/search/retrieve.ts';
import { DEFAULT_MODEL, featureRows, linearScore } from '../server/search/ranker.ts';
import { examplesOf, fitPairwise } from '../server/search/learn.ts';
import { sqliteLearnSource } from '../server/search/learn-source.ts';
import { TUNING } from '../server/search/tuning.ts';
import { resolveLibrary } from '../server/search/context-service.ts';
import { OPERATOR } from '../lib/model.ts';

interface Example {
  kind: string;
  x: number[][];
  y: boolean[];
  heldOut: boolean;
}

interface Tally {
  n: number;
  found: number;
  hit1: number;
  hit5: number;
  mrr: number;
}

const FOLDS = 5;

function rankOf(e: Example, weights: number[]): number {
  const model = { weights, calibration: DEFAULT_MODEL.calibration };
  const scores = e.x.map((x) => linearScore(model, x));
  const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  return order.findIndex((i) => e.y[i]);
}

function tally(examples: { e: Example; weights: number[] }[], kind?: string): Tally {
  const t: Tally = { n: 0, found: 0, hit1: 0, hit5: 0, mrr: 0 };
  for (const { e, weights } of examples) {
    if (kind && e.kind !== kind) continue;
    const r = rankOf(e, weights);
    t.n++;
    if (e.y.includes(true)) t.found++;
    if (r === 0) t.hit1++;
    if (r >= 0 && r < 5) t.hit5++;
    if (r >= 0 && r < 10) t.mrr += 1 / (r + 1);
  }
  return t;
}

const pct = (a: number, n: number) => `${((100 * a) / Math.max(1, n)).toFixed(1)}%`;
const line = (t: Tally) =>
  `MRR@10 ${(t.mrr / Math.max(1, t.n)).toFixed(3)}  hit@1 ${pct(t.hit1, t.n)}  hit@5 ${pct(t.hit5, t.n)}  (answer among the candidates: ${pct(t.found, t.n)} of ${t.n})`;

async function devExamples(services: Services<Store>): Promise<{ examples: Example[]; versions: Set<number> }> {
  const store = services.store;
  const examples: Example[] = [];
  const versions = new Set<number>();
  const questions = loadQuestions().filter((q) => q.split === 'dev' && q.libraryId && q.kind !== 'offtopic' && q.kind !== 'multi');
  for (const q of questions) {
    const r = resolveLibrary(store, services.access, OPERATOR, q.libraryId!);
    versions.add(r.choice.version.id);
    const pq = await prepareQuery(q.query, services.embedder);
    const candidates = retrievePrepared(store, r.choice.version.id, pq, { libraryId: r.library.id, fetchLimit: TUNING.fetch.rerank });
    examples.push({ kind: q.kind, x: featureRows(pq, candidates), y: candidates.map((c) => relevant(c.snippet.sourceId, q.expect)), heldOut: false });
  }
  return { examples, versions };
}

const { services, dataDir } = await loadCorpus(ALL_BUNDLES);
try {
  const store = services.store;
  const { examples, versions } = await devExamples(services);
  // The heading questions of the versions the dev questions ask, as the search-model job builds them.
  const headings = [];
  for (const v of versions) headings.push(...(await examplesOf(sqliteLearnSource(store), services.embedder, v)));
  const heading = await fitPairwise(headings, DEFAULT_MODEL.weights);
  const folded: { e: Example; weights: number[] }[] = [];
  for (let f = 0; f < FOLDS; f++) {
    const weights = await fitPairwise(
      examples.filter((e, i) => i % FOLDS !== f && e.y.includes(true)),
      DEFAULT_MODEL.weights,
    );
    folded.push(...examples.filter((_, i) => i % FOLDS === f).map((e) => ({ e, weights })));
  }
  const rows: [string, { e: Example; weights: number[] }[]][] = [
    ['default model', examples.map((e) => ({ e, weights: DEFAULT_MODEL.weights }))],
    ['learned from the headings', examples.map((e) => ({ e, weights: heading }))],
    [`fitted on the dev questions (${FOLDS}-fold)`, folded],
  ];
  for (const [name, scored] of rows) {
    console.log(`${name}\n  all         ${line(tally(scored))}\n  paraphrase  ${line(tally(scored, 'paraphrase'))}`);
  }
} finally {
  services.store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
