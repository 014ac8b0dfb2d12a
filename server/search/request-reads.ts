import type { SearchReads } from '../store/version-reads.ts';
import type { CatalogView } from './catalog.ts';

/**
 * A search's reads on PostgreSQL (over pgRequestReads) that ask each word's document frequency
 * once per request: selection's probe and the "nothing found" decision ask for mostly the same
 * words, and each read is a round trip. Build one per request: the counts are that request's.
 */
export function wordsReadOnce(reads: SearchReads): SearchReads {
  /** Each word asked, with its count; null when no document holds it. */
  const known = new Map<string, number | null>();
  return {
    ...reads,
    documentFrequencies: async (terms) => {
      const missing = [...new Set(terms.filter((t) => !known.has(t)))];
      if (missing.length > 0) {
        const read = await reads.documentFrequencies(missing);
        for (const t of missing) known.set(t, read.get(t) ?? null);
      }
      // In the order asked, as the store's map is filled.
      const out = new Map<string, number>();
      for (const t of terms) {
        const n = known.get(t);
        if (n !== null && n !== undefined) out.set(t, n);
      }
      return out;
    },
  };
}

/**
 * The reads after a search's snapshot, taking the model times of the versions the request's
 * catalogue view holds from the view (read under the stamp its snapshot checked, which changes with
 * every model stored or removed) rather than a statement per version; others are read.
 */
export function modelTimesOf(reads: SearchReads, view: CatalogView): SearchReads {
  return {
    ...reads,
    modelBuiltAt: (versionId) => {
      const at = view.modelBuiltAt(versionId);
      return at === undefined ? reads.modelBuiltAt(versionId) : at;
    },
  };
}
