import type { Services } from '../services.ts';
import { ApiError } from '../errors.ts';
import type { DocsServices } from './backend.ts';

/**
 * The retrieval services from the container. While a build lacks one of them (they are separate
 * features), the tool that needs it fails with a tool error instead of the whole endpoint.
 */
export function docsServices(s: Services): DocsServices {
  const p = s as Services & Partial<DocsServices>;
  const missing = (name: string) => {
    throw new ApiError('search_failed', `The ${name} service is not available in this build.`);
  };
  return {
    context: p.context ?? { query: async () => missing('context') },
    search: p.search ?? { search: async () => missing('search') },
    librarySearch: p.librarySearch ?? { search: async () => missing('library search') },
  };
}
