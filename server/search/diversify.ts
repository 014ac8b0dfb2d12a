import type { Candidate } from './retrieve.ts';
import { byScore } from './retrieve.ts';
import { sectionOf } from './source-url.ts';

/**
 * Several snippets of one section (the code blocks `URL#anchor~2`, `~3`... and its prose) can fill
 * the top of a list and push other answers out. Each further snippet of a section already listed
 * has its score multiplied by SECTION_DECAY once more, so a section keeps its best snippet but
 * yields to other sections unless it is four times as likely to answer. The code example a prose
 * hit needs is brought back next to it afterwards (neighbours.ts). 0.85 until Nov 28: an answer's
 * first five then held 3.5 sections on average, now 3.9 (docs/retrieval.md, Nov 28).
 */
export const SECTION_DECAY = 0.25;

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
