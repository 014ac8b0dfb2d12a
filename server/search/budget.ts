import type { Candidate } from './retrieve.ts';
import { sectionKey, sectionOf } from './source-url.ts';

/** Default response budget (tokens of snippet bodies) and the most snippets one answer carries. */
export const DEFAULT_BUDGET = { tokens: 5000, maxSnippets: 20 } as const;

/**
 * Weak tails are dropped, not padded: past the first `keep` sections, a snippet whose probability
 * of answering is under `ratio` times the best one's ends the answer. On test/eval (dev split) this
 * left hit@5 and MRR of the text order unchanged and raised the JSON order's (code snippets listed
 * before prose) hit@5 from 74% to 81%: the tail was mostly code that pushed the best prose out of reach.
 * When the best snippet more likely than not answers (probability >= `confident`), code under that
 * floor is left out anywhere in the answer: such a client shows it first (JSON order, dev split:
 * hit@1 57.8% -> 59.9%, MRR@10 0.680 -> 0.695; the text order unchanged).
 * When the best snippet is prose whose section has no code in the answer, code under
 * `proseFirst` times its probability is left out too: a client listing code first would show
 * another section's example before the explanation that answers (JSON order, dev split: hit@1
 * 60.3% -> 63.8%, MRR@10 0.686 -> 0.708; text order hit@5 80.6% -> 80.0%, MRR@10 0.703 -> 0.702).
 */
export const WEAK_TAIL = { ratio: 0.1, keep: 5, confident: 0.5, proseFirst: 0.5 } as const;

/**
 * Takes candidates in order while their token counts fit the budget and they are not a weak tail (WEAK_TAIL). The first one is always
 * taken (an answer is never empty because its best snippet is long); later ones that do not fit
 * are skipped so that a smaller one further down can still use the rest of the budget.
 */
export function pack<T extends Candidate>(items: T[], budget: { tokens?: number; maxSnippets?: number } = {}): T[] {
  const limit = budget.tokens ?? DEFAULT_BUDGET.tokens;
  const max = budget.maxSnippets ?? DEFAULT_BUDGET.maxSnippets;
  const out: T[] = [];
  let used = 0;
  const best = items[0]?.score ?? 0;
  const floor = best * WEAK_TAIL.ratio;
  const confident = best >= WEAK_TAIL.confident;
  const codeFloor = proseWithoutCode(items) ? best * WEAK_TAIL.proseFirst : 0;
  // Context pulled in for a hit (neighbours.ts) goes only with its hit, and is not one of the
  // first `keep` hits (the text layout shows it in its hit's block).
  let hitKept = false;
  // The first `keep` hits are counted in sections: the text layout shows a section's later
  // snippets in its first block, so five kept hits of three sections would be three places.
  const sections = new Set<string>();
  for (const c of items) {
    if (out.length >= max) break;
    if (c.via && !hitKept) continue;
    if (!c.via) hitKept = false;
    if (c.snippet.kind === 'code' && c.score < codeFloor) continue;
    if (c.score < floor) {
      if (sections.size >= WEAK_TAIL.keep) break;
      if (confident && c.snippet.kind === 'code') continue;
    }
    const t = c.snippet.tokens;
    if (out.length > 0 && used + t > limit) continue;
    out.push(c);
    used += t;
    if (!c.via) {
      hitKept = true;
      sections.add(sectionKey(c.snippet));
    }
  }
  return out;
}

/** True when the best snippet is prose and no code of its section is among the candidates. */
function proseWithoutCode(items: Candidate[]): boolean {
  const top = items[0];
  if (!top || top.snippet.kind !== 'info') return false;
  const section = sectionOf(top.snippet.sourceId);
  return !items.some((c) => c.snippet.kind === 'code' && sectionOf(c.snippet.sourceId) === section);
}
