import type { LibrarySearchEntry } from '../search/answer-types.ts';
import type { Caller, Operations } from '../operations/index.ts';

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

/** Tools answered by this process's operations (the same contracts and checks as REST), as the given caller. */
export function localBackend(ops: Pick<Operations, 'context' | 'search' | 'libsSearch'>, caller: Caller): DocsBackend {
  return {
    resolveLibrary: (req) => ops.libsSearch(req, caller),
    async queryDocs(req) {
      return (await ops.context({ libraryId: req.libraryId, query: req.query }, caller)).answer.text;
    },
    async searchDocs(req) {
      const { answer } = await ops.search({ query: req.query, library: req.libraries, version: req.version, language: req.language }, caller);
      return { text: answer.text, headers: answer.headers };
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

/** GET requests to a remote Stacks instance's REST API; an error answer or no answer throws a RemoteError. */
export interface RestClient {
  /** `http://host:3000/api` */
  apiBase: string;
  get(path: string, params?: [string, string][]): Promise<Response>;
}

/**
 * A client of a remote Stacks instance's REST API (`stacks mcp --url`, `stacks jobs follow --url`).
 * `baseUrl` is the instance (`http://host:3000`) or its API base (`.../api`).
 */
export function restClient(
  baseUrl: string,
  apiKey: string | null,
  options: { userAgent?: string; fetchImpl?: typeof fetch; timeoutMs?: number; unreachableCode?: string } = {},
): RestClient {
  const apiBase = baseUrl.replace(/\/+$/, '').replace(/\/api$/, '') + '/api';
  const headers: Record<string, string> = { 'user-agent': options.userAgent ?? 'stacks-cli' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const fetchImpl = options.fetchImpl ?? fetch;

  async function get(path: string, params: [string, string][] = []): Promise<Response> {
    const url = new URL(apiBase + path);
    for (const [k, v] of params) url.searchParams.append(k, v);
    let res: Response;
    try {
      res = await fetchImpl(url, { headers, signal: AbortSignal.timeout(options.timeoutMs ?? 60_000) });
    } catch (err) {
      throw new RemoteError(options.unreachableCode ?? 'search_failed', `Could not reach the Stacks instance at ${apiBase}: ${(err as Error).message}`, 0);
    }
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as { error?: unknown; message?: unknown };
      const code = typeof body.error === 'string' ? body.error : `http_${res.status}`;
      const message = typeof body.message === 'string' ? body.message : `The Stacks instance answered ${res.status} ${res.statusText}.`;
      throw new RemoteError(code, message, res.status);
    }
    return res;
  }
  return { apiBase, get };
}

/** Tools answered by a remote Stacks instance over its REST API (the same calls the official clients make). */
export function remoteBackend(baseUrl: string, apiKey: string | null, fetchImpl: typeof fetch = fetch): DocsBackend {
  const { get } = restClient(baseUrl, apiKey, { userAgent: 'stacks-mcp-stdio', fetchImpl });

  return {
    async resolveLibrary(req) {
      const res = await get('/v2/libs/search', [
        ['query', req.query],
        ['libraryName', req.libraryName],
      ]);
      const body = (await res.json()) as { results?: LibrarySearchEntry[]; searchFilterApplied?: boolean };
      return { results: body.results ?? [], searchFilterApplied: body.searchFilterApplied === true };
    },
    async queryDocs(req) {
      const res = await get('/v2/context', [
        ['query', req.query],
        ['libraryId', req.libraryId],
        ['type', 'txt'],
      ]);
      return res.text();
    },
    async searchDocs(req) {
      const params: [string, string][] = [
        ['query', req.query],
        ['type', 'txt'],
      ];
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
