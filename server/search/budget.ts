import type { Candidate } from './retrieve.ts';
import { sectionKey, sectionOf } from './source-url.ts';
import { TUNING } from './tuning.ts';

/**
 * Takes candidates in order while their token counts fit the budget (default TUNING.budget) and
 * they are not a weak tail (TUNING.budget.weakTail: dropped, not padded). The first one is always
 * taken (an answer is never empty because its best snippet is long); later ones that do not fit
 * are skipped so that a smaller one further down can still use the rest of the budget.
 */
export function pack<T extends Candidate>(items: T[], budget: { tokens?: number; maxSnippets?: number } = {}): T[] {
  const limit = budget.tokens ?? TUNING.budget.tokens;
  const max = budget.maxSnippets ?? TUNING.budget.maxSnippets;
  const out: T[] = [];
  let used = 0;
  const best = items[0]?.score ?? 0;
  const { weakTail } = TUNING.budget;
  const floor = best * weakTail.ratio;
  const confident = best >= weakTail.confident;
  const codeFloor = proseWithoutCode(items) ? best * weakTail.proseFirst : 0;
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
      if (sections.size >= weakTail.keep) break;
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

/** The token budget of one answer grows a little with each extra library (one bounded response; TUNING.multi). */
export function budgetFor(libraries: number): { tokens: number; maxSnippets: number } {
  const extra = Math.max(0, libraries - 1);
  return {
    tokens: TUNING.budget.tokens + TUNING.multi.tokensPerExtraLibrary * extra,
    maxSnippets: TUNING.budget.maxSnippets + TUNING.multi.snippetsPerExtraLibrary * extra,
  };
}

/**
 * Packs the globally ranked list into the budget, then makes sure every selected library that
 * has candidates is represented by its best one (dropping the lowest-ranked items to make room):
 * a search across named libraries answers for each of them.
 */
export function packAcross(list: Candidate[], labels: string[], budget: { tokens: number; maxSnippets: number }): Candidate[] {
  const packed = pack(list, budget);
  for (const label of labels) {
    if (packed.some((c) => c.libraryId === label)) continue;
    const best = list.find((c) => c.libraryId === label);
    if (!best) continue;
    let used = packed.reduce((t, c) => t + c.snippet.tokens, 0);
    while (packed.length > 1 && (used + best.snippet.tokens > budget.tokens || packed.length >= budget.maxSnippets)) {
      // Drop the lowest-ranked item whose library keeps another item.
      const idx = packed.findLastIndex((c) => packed.filter((x) => x.libraryId === c.libraryId).length > 1);
      if (idx < 0) break;
      used -= packed[idx]!.snippet.tokens;
      packed.splice(idx, 1);
    }
    packed.push(best);
  }
  const order = new Map(list.map((c, i) => [c, i]));
  return packed.sort((a, b) => order.get(a)! - order.get(b)!);
}
