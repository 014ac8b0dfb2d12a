/**
 * The "nothing found" verdicts of questions asked without a library, read in process through the
 * search's own stages (MultiLibrarySearch.rankedSearch, then .verdict): the evaluation's view of a
 * decision the product only acts on. scripts/fit-nothing-found.ts fits the decision's constants on them.
 */
import { ApiError } from '../../lib/errors.ts';
import type { Services } from '../../server/services.ts';
import type { Store } from '../../server/store/index.ts';
import { MultiLibrarySearch } from '../../server/search/search-service.ts';
import type { Answerability } from '../../server/search/nothing-found.ts';

export interface VerdictReader {
  /** The verdict on an anonymous library-less question; null when none is made (the question names a library, or no library answers it at all). */
  verdictOf(query: string): Promise<Answerability | null>;
}

export function verdictReader(services: Services<Store>): VerdictReader {
  // Retrieval in this thread: the same candidates as the workers' (test/search-workers.test.ts).
  const search = new MultiLibrarySearch(() => services);
  return {
    async verdictOf(query) {
      try {
        return await search.verdict(await search.rankedSearch({ query, libraries: [] }, null));
      } catch (err) {
        // Refused before any ranking (no library matched, every retrieval failed): no verdict, as over HTTP.
        if (err instanceof ApiError) return null;
        throw err;
      }
    },
  };
}
