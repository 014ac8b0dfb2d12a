import type { Store } from '../store/index.ts';
import type { Candidate } from './retrieve.ts';

/**
 * Context pulled in around the best hits (the peer tool's lesson: chunk boundaries hurt answers).
 * For a code hit whose description says little, the prose of the same section (same URL#anchor);
 * for a short prose hit, its parent section (same page, heading path a proper prefix of the hit's).
 */
export const NEIGHBOURS = {
  /** How many of the top hits get context. */
  hits: 3,
  /** A code description shorter than this is "thin". */
  thinDescriptionChars: 80,
  /** A prose snippet under this many tokens is "short". */
  shortInfoTokens: 60,
} as const;

function pageOf(url: string): string {
  const i = url.indexOf('#');
  return i < 0 ? url : url.slice(0, i);
}

/** Returns the ranked list with context snippets inserted right after the hit they explain. */
export function attachContext(store: Store, ranked: Candidate[], opts: { hits?: number } = {}): Candidate[] {
  const present = new Set(ranked.map((c) => c.snippet.id));
  const additions = new Map<number, Candidate[]>();
  const top = ranked.slice(0, opts.hits ?? NEIGHBOURS.hits);
  for (const hit of top) {
    const s = hit.snippet;
    const wantsTwin = s.kind === 'code' && s.description.trim().length < NEIGHBOURS.thinDescriptionChars;
    const wantsParent = s.kind === 'info' && s.tokens < NEIGHBOURS.shortInfoTokens && s.breadcrumb.includes('>');
    if (!wantsTwin && !wantsParent) continue;
    const ids = store.search.page(s.versionId, pageOf(s.sourceId)).filter((id) => !present.has(id));
    if (ids.length === 0) continue;
    const page = store.snippets.byIds(ids);
    let pick = wantsTwin ? page.find((p) => p.kind === 'info' && p.sourceId === s.sourceId) : undefined;
    let via: Candidate['via'] = 'sibling';
    if (!pick && (wantsParent || wantsTwin) && s.breadcrumb) {
      // The nearest ancestor section: the longest heading path that is a proper prefix of the hit's.
      const parents = page.filter((p) => p.kind === 'info' && p.breadcrumb && s.breadcrumb.startsWith(`${p.breadcrumb} >`));
      parents.sort((a, b) => b.breadcrumb.length - a.breadcrumb.length);
      pick = parents[0];
      via = 'parent';
    }
    if (!pick) continue;
    present.add(pick.id);
    const added: Candidate = {
      snippet: pick, libraryId: hit.libraryId, bm25: null, lexical: 0, cosine: 0, similarity: null, lexicalRank: null, vectorRank: null,
      fused: 0, score: hit.score, via,
    };
    additions.set(hit.snippet.id, [...(additions.get(hit.snippet.id) ?? []), added]);
  }
  if (additions.size === 0) return ranked;
  const out: Candidate[] = [];
  for (const c of ranked) {
    out.push(c);
    out.push(...(additions.get(c.snippet.id) ?? []));
  }
  return out;
}
