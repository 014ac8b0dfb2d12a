import type { Store } from '../store/index.ts';
import { sectionKey, sqliteVersionReads, type SectionRef, type VersionReads } from '../store/version-reads.ts';
import type { StoredSnippet } from '../../lib/model.ts';
import { runSync, wait, type Step } from './read-steps.ts';
import type { Candidate } from './retrieve.ts';
import { pageOf, sectionOf } from './source-url.ts';
import { linkedCandidate, type LinkKey } from './links.ts';
import { TUNING } from './tuning.ts';

/**
 * Context pulled in around the best hits (the peer tool's lesson: chunk boundaries hurt answers).
 * For a prose hit, the code example of its section (moved up when it is further down the list);
 * for a code hit whose description says little, the prose of the same section (same URL#anchor);
 * for a short prose hit of a section without code, its parent section (same page, heading path a
 * proper prefix of the hit's). A hit that links to a section ranked past the first five brings that
 * section too. Its settings: TUNING.neighbours.
 *
 * Returns the ranked list with context snippets inserted (or moved up) right after the hit they explain.
 */
export function attachContext(store: Store, ranked: Candidate[], opts: { hits?: number } = {}): Candidate[] {
  return runSync(attachContextStep(sqliteVersionReads(store), ranked, opts));
}

/** attachContext over either backend's reads (server/store/version-reads.ts). */
export function* attachContextStep(reads: VersionReads, ranked: Candidate[], opts: { hits?: number } = {}): Step<Candidate[]> {
  const present = new Set(ranked.map((c) => c.snippet.id));
  const additions = new Map<number, Candidate[]>();
  const moved = new Set<number>();
  const top = ranked.slice(0, opts.hits ?? TUNING.neighbours.hits);
  const ahead = yield* sectionCodeAhead(reads, top, present);
  for (const [at, hit] of top.entries()) {
    const s = hit.snippet;
    const section = sectionOf(s.sourceId);
    // A prose hit brings its section's code example, so the answer shows how as well as what (and a
    // client that lists code before prose sees the best section's code first).
    if (s.kind === 'info') {
      const codeAbove = ranked.slice(0, at).some((c) => c.snippet.kind === 'code' && sectionOf(c.snippet.sourceId) === section);
      if (!codeAbove) {
        const below = ranked.slice(at + 1).find((c) => c.snippet.kind === 'code' && sectionOf(c.snippet.sourceId) === section && !moved.has(c.snippet.id));
        if (below) {
          moved.add(below.snippet.id);
          additions.set(s.id, [...(additions.get(s.id) ?? []), { ...below, score: hit.score, via: 'sibling' }]);
          continue;
        }
        const twinId = ahead
          ? (ahead.codes.get(sectionKey({ versionId: s.versionId, section })) ?? null)
          : yield* wait(reads.sectionCode(s.versionId, section));
        const twin = twinId === null || present.has(twinId) ? undefined : ahead ? ahead.rows.get(twinId) : (yield* wait(reads.byIds([twinId])))[0];
        if (twin) {
          present.add(twin.id);
          additions.set(s.id, [...(additions.get(s.id) ?? []), context(twin, hit, 'sibling')]);
          continue;
        }
      }
    }
    const wantsTwin = s.kind === 'code' && s.description.trim().length < TUNING.neighbours.thinDescriptionChars;
    const wantsParent = s.kind === 'info' && s.tokens < TUNING.neighbours.shortInfoTokens && s.breadcrumb.includes('>');
    if (!wantsTwin && !wantsParent) continue;
    const ids = (yield* wait(reads.page(s.versionId, pageOf(s.sourceId)))).filter((id) => !present.has(id));
    if (ids.length === 0) continue;
    const page = yield* wait(reads.byIds(ids));
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
    additions.set(s.id, [...(additions.get(s.id) ?? []), context(pick, hit, via)]);
  }
  // A hit that links to a section ranked below the first five ("see [bodyLimit](./Server.md#bodylimit)")
  // brings it into view: the documents' own links say which section completes the hit.
  const keys = new Map<number, LinkKey | null>();
  top.forEach((hit, at) => {
    if (moved.has(hit.snippet.id)) return;
    const target = linkedCandidate(hit, ranked, Math.max(TUNING.neighbours.linkedFrom, at + 1), moved, keys);
    if (!target) return;
    moved.add(target.snippet.id);
    additions.set(hit.snippet.id, [...(additions.get(hit.snippet.id) ?? []), { ...target, score: hit.score, via: 'link' }]);
  });
  if (additions.size === 0) return ranked;
  const out: Candidate[] = [];
  for (const c of ranked) {
    if (moved.has(c.snippet.id)) continue;
    out.push(c);
    out.push(...(additions.get(c.snippet.id) ?? []));
  }
  return out;
}

/**
 * Where the reads answer many sections at once (sectionCodes: PostgreSQL, a round trip per read),
 * the code of every top prose hit's section and those snippets, read before the loop needs them: two
 * statements instead of up to two per hit (some a hit would not have asked). Null on SQLite, which asks as it goes.
 */
function* sectionCodeAhead(
  reads: VersionReads,
  top: Candidate[],
  present: ReadonlySet<number>,
): Step<{ codes: Map<string, number | null>; rows: Map<number, StoredSnippet> } | null> {
  if (!reads.sectionCodes) return null;
  const sections = new Map<string, SectionRef>();
  for (const hit of top) {
    if (hit.snippet.kind !== 'info') continue;
    const ref = { versionId: hit.snippet.versionId, section: sectionOf(hit.snippet.sourceId) };
    sections.set(sectionKey(ref), ref);
  }
  const codes = sections.size > 0 ? yield* wait(reads.sectionCodes([...sections.values()])) : new Map<string, number | null>();
  const ids = [...new Set([...codes.values()].filter((id): id is number => id !== null && !present.has(id)))];
  const rows = ids.length > 0 ? yield* wait(reads.byIds(ids)) : [];
  return { codes, rows: new Map(rows.map((r) => [r.id, r])) };
}

function context(snippet: Candidate['snippet'], hit: Candidate, via: Candidate['via']): Candidate {
  return {
    snippet,
    libraryId: hit.libraryId,
    bm25: null,
    lexical: 0,
    cosine: 0,
    similarity: null,
    lexicalRank: null,
    vectorRank: null,
    fused: 0,
    score: hit.score,
    via,
  };
}
