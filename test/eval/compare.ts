/**
 * Is a change in the evaluation's figures more than noise? Two runs of the same dev questions
 * (`npm run eval -- --save FILE`, then `-- --compare FILE`) are compared question by question:
 * the difference of MRR@10 with a paired bootstrap interval (the questions resampled with
 * replacement, both runs' reciprocal ranks kept together), and how many questions moved up or
 * down. Deterministic: the resampling uses a fixed seed.
 */
import { rng } from '../helpers/rng.ts';
import { reciprocalRank } from './question-set.ts';

/** Per-question ranks of one run, as `--save` writes them (1-based, null: not in the first 10). */
export interface SavedRank {
  id: string;
  kind: string;
  search: number | null;
  searchJson: number | null;
  context: number | null;
  contextJson: number | null;
}

export interface PairedDelta {
  /** Questions present in both runs. */
  n: number;
  /** MRR@10 after minus before. */
  delta: number;
  /** 95% percentile interval of the delta over the bootstrap resamples. */
  low: number;
  high: number;
  /** Questions whose reciprocal rank went up / down. */
  better: number;
  worse: number;
}

/** The mean of `values` and its 95% percentile bootstrap interval (resampled with replacement, fixed seed). */
function bootstrapMean(values: number[], resamples: number, seed: number): { mean: number; low: number; high: number } {
  const n = values.length;
  if (n === 0) return { mean: 0, low: 0, high: 0 };
  const next = rng(seed);
  const means: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(next() * n)]!;
    means.push(sum / n);
  }
  means.sort((a, b) => a - b);
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))]!;
  return { mean: values.reduce((s, x) => s + x, 0) / n, low: at(0.025), high: at(0.975) };
}

/** Paired bootstrap of the MRR@10 difference between two lists of ranks of the same questions. */
export function pairedDelta(before: (number | null)[], after: (number | null)[], resamples = 2000, seed = 1): PairedDelta {
  if (before.length !== after.length) throw new Error('the two runs must rank the same questions');
  const d = before.map((b, i) => reciprocalRank(after[i]!) - reciprocalRank(b));
  const { mean, low, high } = bootstrapMean(d, resamples, seed);
  return { n: d.length, delta: mean, low, high, better: d.filter((x) => x > 0).length, worse: d.filter((x) => x < 0).length };
}

/**
 * MRR@10 of one run's questions with its 95% bootstrap interval: how far the figure of a set this
 * size moves with the questions drawn (a held-out set of 80 questions spans about +-0.09).
 */
export function mrrInterval(ranks: (number | null)[], resamples = 2000, seed = 1): { n: number; mrr: number; low: number; high: number } {
  const { mean, low, high } = bootstrapMean(ranks.map(reciprocalRank), resamples, seed);
  return { n: ranks.length, mrr: mean, low, high };
}

/** The comparison lines `--compare` prints: per endpoint and order, all dev questions and each kind. */
export function compareRuns(before: SavedRank[], after: SavedRank[]): string[] {
  const old = new Map(before.map((r) => [r.id, r]));
  // Off-topic questions have no rank to compare (their answer is "nothing found", counted apart).
  const both = after.filter((r) => old.has(r.id) && r.kind !== 'offtopic');
  const groups = new Map<string, SavedRank[]>([['all', both]]);
  for (const r of both) groups.set(`kind ${r.kind}`, [...(groups.get(`kind ${r.kind}`) ?? []), r]);
  const lines = [`dev on-topic questions in both runs: ${both.length} (MRR@10 after - before, 95% paired bootstrap interval; questions up / down)`];
  for (const key of ['search', 'searchJson', 'context', 'contextJson'] as const) {
    for (const [name, rows] of groups) {
      const p = pairedDelta(
        rows.map((r) => old.get(r.id)![key]),
        rows.map((r) => r[key]),
      );
      const sign = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(3);
      const verdict = p.low > 0 ? 'better' : p.high < 0 ? 'worse' : 'within noise';
      lines.push(
        `${key.padEnd(12)} ${name.padEnd(20)} ${String(p.n).padStart(4)}  ${sign(p.delta)} [${sign(p.low)}, ${sign(p.high)}]  ${p.better} up / ${p.worse} down  ${verdict}`,
      );
    }
  }
  return lines;
}
