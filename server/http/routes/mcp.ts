import type { Express, Request, Response } from 'express';
import cors from 'cors';
import type { Logger } from '../../log.ts';
import type { Operations } from '../../operations/index.ts';
import { ApiError } from '../../../lib/errors.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';
import { searchOperation } from '../../contracts/search.ts';
import { localBackend } from '../../mcp/backend.ts';
import { VERSION } from '../../version.ts';

/** The MCP endpoint path; metered like the REST API (one request per POST). */
export const MCP_PATH = '/mcp';

/** Browser-based MCP clients need CORS; the key headers must be allowed in the preflight. */
const mcpCors = cors({
  origin: '*',
  methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
  allowedHeaders: [
    'Content-Type',
    'Accept',
    'Authorization',
    'X-API-Key',
    'STACKS_API_KEY',
    'Stacks-API-Key',
    'Mcp-Session-Id',
    'Mcp-Protocol-Version',
    'Mcp-Method',
    'Mcp-Name',
    'Last-Event-ID',
  ],
  exposedHeaders: ['Mcp-Session-Id', 'Mcp-Protocol-Version', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  maxAge: 86400,
});

/** What the MCP route uses. */
export interface McpRouteDeps {
  operations: Parameters<typeof localBackend>[0] & Pick<Operations, 'admit'>;
  log: Logger;
}

/**
 * Streamable HTTP MCP, stateless: every POST gets a fresh server and transport (no session), so
 * any replica can answer any request. The caller is the one resolved from the request's key
 * (resolvePrincipal); without a key the request is anonymous, allowed when allowAnonymousSearch.
 */
/** The MCP SDK, loaded at the first MCP request: processes that never serve MCP (most CLI runs) do not pay for it. */
let sdk: Promise<[typeof import('../../mcp/server.ts'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]> | null = null;
const loadSdk = () => (sdk ??= Promise.all([import('../../mcp/server.ts'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]));

export function mountMcp(app: Express, s: McpRouteDeps): void {
  app.use(MCP_PATH, mcpCors);

  app.post(
    MCP_PATH,
    route(async (req: Request, res: Response) => {
      // An instance that requires a key for search refuses the whole request (401), as REST does.
      const caller = callerOf(res);
      s.operations.admit(searchOperation, caller);
      const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await loadSdk();
      const server = createMcpServer(localBackend(s.operations, caller), {
        version: VERSION,
        onUnexpected: (err) => s.log.error({ err: (err as Error)?.message, stack: (err as Error)?.stack }, 'MCP tool failed'),
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    }),
  );

  // Stateless: no server-initiated SSE stream and no session to delete.
  const notAllowed = route(() => {
    throw new ApiError('method_not_allowed', 'This MCP endpoint is stateless: send JSON-RPC requests with POST.', { headers: { Allow: 'POST, OPTIONS' } });
  });
  app.get(MCP_PATH, notAllowed);
  app.delete(MCP_PATH, notAllowed);
}
