import type { Candidate } from './retrieve.ts';

/** Default response budget (tokens of snippet bodies) and the most snippets one answer carries. */
export const DEFAULT_BUDGET = { tokens: 5000, maxSnippets: 20 } as const;

/**
 * Takes candidates in order while their token counts fit the budget. The first one is always
 * taken (an answer is never empty because its best snippet is long); later ones that do not fit
 * are skipped so that a smaller one further down can still use the rest of the budget.
 */
export function pack<T extends Candidate>(items: T[], budget: { tokens?: number; maxSnippets?: number } = {}): T[] {
  const limit = budget.tokens ?? DEFAULT_BUDGET.tokens;
  const max = budget.maxSnippets ?? DEFAULT_BUDGET.maxSnippets;
  const out: T[] = [];
  let used = 0;
  for (const c of items) {
    if (out.length >= max) break;
    const t = c.snippet.tokens;
    if (out.length > 0 && used + t > limit) continue;
    out.push(c);
    used += t;
  }
  return out;
}
