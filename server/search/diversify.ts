import type { Candidate } from './retrieve.ts';
import { byScore } from './retrieve.ts';
import { sectionOf } from './source-url.ts';

/**
 * Several snippets of one section (the code blocks `URL#anchor~2`, `~3`... and its prose) can fill
 * the top of a list and push other answers out. Each further snippet of a section already listed
 * has its score multiplied by SECTION_DECAY once more, so a section keeps its best snippets but
 * yields to other sections when they are close. Score gaps larger than the decay still win.
 */
export const SECTION_DECAY = 0.85;

/** Re-sorts a ranked list with the per-section decay applied (input sorted best first). */
export function diversify(ranked: Candidate[], decay = SECTION_DECAY): Candidate[] {
  if (ranked.length < 3) return ranked;
  const seen = new Map<string, number>();
  const adjusted = ranked.map((c) => {
    const key = `${c.libraryId}\u0000${sectionOf(c.snippet.sourceId)}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return n === 0 ? c : { ...c, score: c.score * decay ** n };
  });
  return adjusted.sort(byScore);
}
