import type { Principal } from '../../lib/model.ts';
import type { ContextService, LibrarySearchEntry, LibrarySearchService, SearchService } from '../search/contracts.ts';

/**
 * What the MCP tools need from Stacks. Two implementations: the local services (HTTP /mcp and
 * `stacks mcp` on a data dir) and a remote instance's REST API (`stacks mcp --url`). Failures are
 * thrown as errors with a `code` and a `message` (ApiError locally, RemoteError remotely); the tool
 * layer turns them into MCP tool errors.
 */
export interface DocsBackend {
  resolveLibrary(req: { libraryName: string; query: string }): Promise<{ results: LibrarySearchEntry[]; searchFilterApplied: boolean }>;
  /** The text rendering of /api/v2/context. */
  queryDocs(req: { libraryId: string; query: string }): Promise<string>;
  /** The text rendering of /api/v3/search and its X-Stacks-Search-* headers. */
  searchDocs(req: { query: string; libraries: string[]; version?: string; language?: string }): Promise<{ text: string; headers: Record<string, string> }>;
}

/** The three retrieval services the tools call (fields of Services). */
export interface DocsServices {
  context: ContextService;
  search: SearchService;
  librarySearch: LibrarySearchService;
}

/** Tools answered by this process's services, as the given caller (null: anonymous). */
export function localBackend(services: DocsServices, principal: Principal | null): DocsBackend {
  return {
    resolveLibrary: (req) => services.librarySearch.search(req, principal),
    async queryDocs(req) {
      const r = await services.context.query({ libraryId: req.libraryId, query: req.query, fast: false, researchMode: false }, principal);
      return r.text;
    },
    async searchDocs(req) {
      const r = await services.search.search({ query: req.query, libraries: req.libraries, version: req.version, language: req.language }, principal);
      return { text: r.text, headers: r.headers };
    },
  };
}

/** An error answer of a remote Stacks instance ({error, message} body). */
export class RemoteError extends Error {
  override name = 'RemoteError';
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * Tools answered by a remote Stacks instance over its REST API (the same calls the official
 * clients make). `baseUrl` is the instance (`http://host:3000`) or its API base (`.../api`).
 */
export function remoteBackend(baseUrl: string, apiKey: string | null, fetchImpl: typeof fetch = fetch): DocsBackend {
  const apiBase = baseUrl.replace(/\/+$/, '').replace(/\/api$/, '') + '/api';
  const headers: Record<string, string> = { 'user-agent': 'stacks-mcp-stdio' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;

  async function get(path: string, params: [string, string][]): Promise<Response> {
    const url = new URL(apiBase + path);
    for (const [k, v] of params) url.searchParams.append(k, v);
    let res: Response;
    try {
      res = await fetchImpl(url, { headers, signal: AbortSignal.timeout(60_000) });
    } catch (err) {
      throw new RemoteError('search_failed', `Could not reach the Stacks instance at ${apiBase}: ${(err as Error).message}`, 0);
    }
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as { error?: unknown; message?: unknown };
      const code = typeof body.error === 'string' ? body.error : `http_${res.status}`;
      const message = typeof body.message === 'string' ? body.message : `The Stacks instance answered ${res.status} ${res.statusText}.`;
      throw new RemoteError(code, message, res.status);
    }
    return res;
  }

  return {
    async resolveLibrary(req) {
      const res = await get('/v2/libs/search', [['query', req.query], ['libraryName', req.libraryName]]);
      const body = (await res.json()) as { results?: LibrarySearchEntry[]; searchFilterApplied?: boolean };
      return { results: body.results ?? [], searchFilterApplied: body.searchFilterApplied === true };
    },
    async queryDocs(req) {
      const res = await get('/v2/context', [['query', req.query], ['libraryId', req.libraryId], ['type', 'txt']]);
      return res.text();
    },
    async searchDocs(req) {
      const params: [string, string][] = [['query', req.query], ['type', 'txt']];
      for (const l of req.libraries) params.push(['library', l]);
      if (req.version) params.push(['version', req.version]);
      if (req.language) params.push(['language', req.language]);
      const res = await get('/v3/search', params);
      const out: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        if (k.startsWith('x-stacks-search-')) out[k] = v;
      });
      return { text: await res.text(), headers: out };
    },
  };
}
