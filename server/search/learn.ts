import type { Embedder } from '../embed/types.ts';
import { prepareQuery } from './query.ts';
import type { LearnSource } from './learn-source.ts';
import { DEFAULT_MODEL, FEATURES, featureRows, linearScore, type Feature, type LearnedModel, type RankingModel, type Weights } from './ranker.ts';
import { pageOf, sectionOf } from './source-url.ts';
import { HeadingRoots } from './change-pages.ts';
import { PackageList } from './package-names.ts';
import { TUNING } from './tuning.ts';

/**
 * Learning a version's ranking model from its own documents (no labelled questions, no language
 * model). Every section heading is a question whose answer is known: the snippets of that section.
 * Each heading is asked through the same retrieval as a real question; the features of the
 * candidates and whether each belongs to the heading's section make the training pairs (with a
 * sentence encoder, each heading also as if it shared no word with its section: withoutWords). A pairwise
 * logistic model is fitted, pulled towards the default weights (small libraries have few
 * headings), and adopted only if it ranks better than the default on the headings of pages held
 * out of training. Finally its scores are turned into probabilities (Platt scaling) on all headings.
 * Deterministic: the same documents give the same model. Its settings: TUNING.learn.
 */

interface PseudoQuestion {
  text: string;
  section: string;
  page: string;
}

export interface Example {
  x: number[][];
  y: boolean[];
  heldOut: boolean;
  /** The heading's copy without its words (withoutWords). */
  withoutWords?: boolean;
}

/** FNV-1a: a cheap, fixed hash for sampling headings and holding out pages (the same text, the same choice). */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** What a heading question needs of a snippet. */
export interface HeadingRow {
  sourceId: string;
  kind: 'code' | 'info';
  title: string;
  breadcrumb: string;
}

/** The heading of a section as a question: its last heading, without markdown. */
function headingOf(s: HeadingRow): string {
  const last = (s.breadcrumb || s.title).split(' > ').pop() ?? '';
  return last
    .replace(/[`*_#]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Headings that name exactly one section of the version (a heading shared by sections, "Usage",
 * says nothing), the `max` with the smallest hash of their section. Yields to the event loop every
 * few thousand rows: a version may have hundreds of thousands of sections.
 */
export async function pseudoQuestions(snippets: HeadingRow[], max: number = TUNING.learn.maxQuestions): Promise<PseudoQuestion[]> {
  // One snippet per section, prose preferred: its heading path ends with the section's heading.
  const bySection = new Map<string, HeadingRow>();
  for (let i = 0; i < snippets.length; i++) {
    const s = snippets[i]!;
    const section = sectionOf(s.sourceId);
    const seen = bySection.get(section);
    if (!seen || (seen.kind !== 'info' && s.kind === 'info')) bySection.set(section, s);
    if (i % YIELD_ROWS === YIELD_ROWS - 1) await yieldToEventLoop();
  }
  const sections = new Map<string, number>();
  const all: PseudoQuestion[] = [];
  let n = 0;
  for (const [section, s] of bySection) {
    if (++n % YIELD_ROWS === 0) await yieldToEventLoop();
    const text = headingOf(s);
    if (text.length < 3 || !/[a-z]{3}/i.test(text)) continue;
    const key = text.toLowerCase();
    sections.set(key, (sections.get(key) ?? 0) + 1);
    all.push({ text, section, page: pageOf(section) });
  }
  // The `max` smallest hashes, kept in a buffer trimmed as it grows (no sort of every section).
  let kept: { q: PseudoQuestion; h: number }[] = [];
  const byHash = (a: { q: PseudoQuestion; h: number }, b: { q: PseudoQuestion; h: number }) => a.h - b.h || (a.q.section < b.q.section ? -1 : 1);
  for (let i = 0; i < all.length; i++) {
    const q = all[i]!;
    if (sections.get(q.text.toLowerCase()) !== 1) continue;
    kept.push({ q, h: hashOf(q.section) });
    if (kept.length >= 4 * max) kept = kept.sort(byHash).slice(0, max);
    if (i % YIELD_ROWS === YIELD_ROWS - 1) await yieldToEventLoop();
  }
  return kept
    .sort(byHash)
    .slice(0, max)
    .map((x) => x.q);
}

/** Rows handled between two yields to the event loop (a few milliseconds of work). */
const YIELD_ROWS = 5000;

async function yieldToEventLoop(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Stops the learning when its job is cancelled or the server shuts down. */
function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

/** Mean reciprocal rank (at 10) of the first positive under a weight vector. */
function mrr(examples: Example[], weights: number[]): number {
  if (examples.length === 0) return 0;
  const model: RankingModel = { weights, calibration: DEFAULT_MODEL.calibration };
  let sum = 0;
  for (const e of examples) {
    const scores = e.x.map((x) => linearScore(model, x));
    const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
    const r = order.findIndex((i) => e.y[i]);
    if (r >= 0 && r < 10) sum += 1 / (r + 1);
  }
  return sum / examples.length;
}

/** Pairwise logistic regression (each positive against each negative of its question), L2 towards `prior`. */
export async function fitPairwise(examples: Example[], prior: number[], signal?: AbortSignal): Promise<number[]> {
  const d = prior.length;
  const diffs: Float64Array[] = [];
  for (const e of examples) {
    const pos = e.x.filter((_, i) => e.y[i]).slice(0, TUNING.learn.positivesPerQuestion);
    const neg = e.x.filter((_, i) => !e.y[i]);
    for (const p of pos) for (const n of neg) diffs.push(Float64Array.from(p, (v, k) => v - n[k]!));
  }
  const w = Float64Array.from(prior);
  if (diffs.length === 0) return [...w];
  const g = new Float64Array(d);
  const { epochs, learningRate, l2 } = TUNING.learn;
  for (let epoch = 0; epoch < epochs; epoch++) {
    g.fill(0);
    for (const x of diffs) {
      let s = 0;
      for (let k = 0; k < d; k++) s += w[k]! * x[k]!;
      const sig = 1 / (1 + Math.exp(s));
      for (let k = 0; k < d; k++) g[k]! -= sig * x[k]!;
    }
    for (let k = 0; k < d; k++) w[k]! -= learningRate * (g[k]! / diffs.length + l2 * (w[k]! - prior[k]!));
    if (epoch % 5 === 4) {
      stopIfAborted(signal);
      await yieldToEventLoop();
    }
  }
  return [...w];
}

/** Platt scaling: a and b of p = 1 / (1 + exp(-(a s + b))) by logistic regression of the labels on the scores. */
export function fitCalibration(examples: Example[], weights: number[]): { a: number; b: number } {
  const model: RankingModel = { weights, calibration: DEFAULT_MODEL.calibration };
  const s: number[] = [];
  const y: number[] = [];
  for (const e of examples) e.x.forEach((x, i) => (s.push(linearScore(model, x)), y.push(e.y[i] ? 1 : 0)));
  if (!y.includes(1) || !y.includes(0)) return DEFAULT_MODEL.calibration;
  // Platt's targets keep the fit finite when the classes separate.
  const pos = y.filter((v) => v === 1).length;
  const neg = y.length - pos;
  const hi = (pos + 1) / (pos + 2);
  const lo = 1 / (neg + 2);
  const loss = (a: number, b: number) => {
    let l = 0;
    for (let i = 0; i < s.length; i++) {
      const z = a * s[i]! + b;
      const t = y[i] ? hi : lo;
      // -[t log p + (1 - t) log(1 - p)] with p = sigmoid(z), computed stably.
      l += Math.max(z, 0) - z * t + Math.log1p(Math.exp(-Math.abs(z)));
    }
    return l;
  };
  let a = 1;
  let b = 0;
  let current = loss(a, b);
  for (let it = 0; it < 100; it++) {
    let ga = 0;
    let gb = 0;
    let haa = 1e-9;
    let hab = 0;
    let hbb = 1e-9;
    for (let i = 0; i < s.length; i++) {
      const p = 1 / (1 + Math.exp(-(a * s[i]! + b)));
      const r = p - (y[i] ? hi : lo);
      ga += r * s[i]!;
      gb += r;
      const h = p * (1 - p);
      haa += h * s[i]! * s[i]!;
      hab += h * s[i]!;
      hbb += h;
    }
    const det = haa * hbb - hab * hab;
    if (!(det > 0)) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    // Newton's step, halved until the loss goes down (Platt's safeguard).
    let step = 1;
    while (step > 1e-6 && !(loss(a - step * da, b - step * db) < current)) step /= 2;
    if (step <= 1e-6) break;
    a -= step * da;
    b -= step * db;
    const next = loss(a, b);
    if (current - next < 1e-10 * Math.max(1, current)) {
      current = next;
      break;
    }
    current = next;
  }
  return Number.isFinite(a) && Number.isFinite(b) && a > 0 ? { a, b } : DEFAULT_MODEL.calibration;
}

/** A version's rows as the learning reads them, and the change pages their headings tell. */
async function headingsOf(source: LearnSource, versionId: number): Promise<{ rows: HeadingRow[]; changePages: string[] }> {
  // Only the headings are read, a page at a time: a 200,000-snippet version must not hold the event loop (or its memory).
  const rows: HeadingRow[] = [];
  const roots = new HeadingRoots();
  for (let after = 0; ; ) {
    const page = await source.headings(versionId, after, 5000);
    if (page.length === 0) break;
    rows.push(...page);
    for (const r of page) roots.add(r);
    after = page[page.length - 1]!.id;
    await yieldToEventLoop();
  }
  return { rows, changePages: roots.changePages() };
}

/** The packages a version's documents tell you to install (its install commands), read a page of rows at a time. */
async function packagesOf(source: LearnSource, versionId: number): Promise<string[]> {
  const list = new PackageList();
  for (let after = 0; ; ) {
    const page = await source.installTexts(versionId, after, 2000);
    if (page.length === 0) break;
    for (const r of page) list.add(r.text, r.kind);
    after = page[page.length - 1]!.id;
    await yieldToEventLoop();
  }
  return list.list();
}

/** The features that read the question's words; the others are the embedding's and the snippet's own. */
const WORD_FEATURES = new Set<Feature>(['lexical', 'lexicalRank', 'cosine', 'section', 'title', 'coverage', 'phrase', 'identifier']);
const WORD_COLUMNS = FEATURES.flatMap((f, i) => (WORD_FEATURES.has(f) ? [i] : []));

/**
 * A candidate's features as if the question shared no word with any document. A heading always
 * shares its words with its section, while a need put in the asker's own words often shares none:
 * learned from headings alone, a model trusts the words and hardly the embedding. So with a
 * sentence encoder each heading is learned twice, as written and with every word feature zeroed,
 * and the model learns how well the embedding alone finds the section too. Not with the builtin
 * word vectors: averaged words know no meaning beyond the words, and trusting them alone made every
 * kind of question rank worse on the evaluation's dev split.
 */
function withoutWords(row: number[]): number[] {
  const out = [...row];
  for (const i of WORD_COLUMNS) out[i] = 0;
  return out;
}

/** The headings of one version asked as questions (with a sentence encoder also without their words): their candidates' features and labels. */
export async function examplesOf(
  source: LearnSource,
  embedder: Embedder | null,
  versionId: number,
  signal?: AbortSignal,
  rows?: HeadingRow[],
  pace?: () => void,
): Promise<Example[]> {
  rows ??= (await headingsOf(source, versionId)).rows;
  const out: Example[] = [];
  // One question at a time between yields: on a large version one retrieval takes tens of milliseconds.
  for (const pq of await pseudoQuestions(rows)) {
    stopIfAborted(signal);
    await yieldToEventLoop();
    pace?.();
    const q = await prepareQuery(pq.text, embedder);
    const candidates = await source.candidates(versionId, q, { fetchLimit: TUNING.fetch.rerank });
    const y = candidates.map((c) => sectionOf(c.snippet.sourceId) === pq.section);
    if (!y.includes(true)) continue;
    const x = featureRows(q, candidates);
    const heldOut = hashOf(pq.page) % TUNING.learn.holdOutEvery === 0;
    out.push({ x, y, heldOut });
    if (embedder?.sentenceEncoder) out.push({ x: x.map(withoutWords), y, heldOut, withoutWords: true });
  }
  return out;
}

/**
 * Weights fitted on `examples` from `prior`, adopted only when they rank the held-out pages'
 * headings at least as well as the prior; their calibration; and both MRRs for the report.
 */
async function fitWeights(
  examples: Example[],
  prior: number[],
  signal?: AbortSignal,
): Promise<Weights & { learned: boolean; defaultMrr: number; learnedMrr: number }> {
  const train = examples.filter((e) => !e.heldOut);
  const held = examples.filter((e) => e.heldOut);
  let weights = prior;
  let learnedMrr = 0;
  const defaultMrr = mrr(held, prior);
  if (examples.filter((e) => !e.withoutWords).length >= TUNING.learn.minQuestions && held.length > 0) {
    const candidate = await fitPairwise(train, prior, signal);
    learnedMrr = mrr(held, candidate);
    if (learnedMrr >= defaultMrr) weights = await fitPairwise(examples, prior, signal);
  }
  return { weights: [...weights], calibration: fitCalibration(examples, weights), learned: weights !== prior, defaultMrr, learnedMrr };
}

/**
 * Learns the ranking model of one version from its documents. With a sentence encoder, the headings
 * without their words shape the main weights, and the headings as written alone the `quoted` ones
 * (for questions that quote the documents, RankingModel).
 */
export async function learnModel(
  source: LearnSource,
  embedder: Embedder | null,
  versionId: number,
  signal?: AbortSignal,
  pace?: () => void,
): Promise<LearnedModel> {
  const { rows, changePages } = await headingsOf(source, versionId);
  const examples = await examplesOf(source, embedder, versionId, signal, rows, pace);
  const asWritten = examples.filter((e) => !e.withoutWords);
  const wordsPrior = (DEFAULT_MODEL.quoted ?? DEFAULT_MODEL).weights;
  // Without a sentence encoder every heading is as written: it starts from the default's weights for such questions.
  const main = await fitWeights(examples, embedder?.sentenceEncoder ? DEFAULT_MODEL.weights : wordsPrior, signal);
  const quoted = asWritten.length < examples.length ? await fitWeights(asWritten, wordsPrior, signal) : null;
  return {
    weights: main.weights,
    calibration: main.calibration,
    ...(quoted ? { quoted: { weights: quoted.weights, calibration: quoted.calibration } } : {}),
    changePages,
    packages: await packagesOf(source, versionId),
    source: main.learned ? 'learned' : 'default',
    report: { questions: asWritten.length, heldOut: asWritten.filter((e) => e.heldOut).length, defaultMrr: main.defaultMrr, learnedMrr: main.learnedMrr },
  };
}
