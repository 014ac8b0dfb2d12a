import type { Candidate } from './retrieve.ts';
import { byScore } from './retrieve.ts';
import { sectionOf } from './source-url.ts';
import { TUNING } from './tuning.ts';

/**
 * Several snippets of one section (the code blocks `URL#anchor~2`, `~3`... and its prose) can fill
 * the top of a list and push other answers out. Each further snippet of a section already listed
 * has its score multiplied by TUNING.diversify.sectionDecay once more, so a section keeps its best
 * snippet but yields to other sections. The code example a prose hit needs is brought back next to
 * it afterwards (neighbours.ts). Re-sorts a ranked list with the decay applied (input sorted best first).
 */
export function diversify(ranked: Candidate[], decay: number = TUNING.diversify.sectionDecay): Candidate[] {
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
