import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { DocsBackend } from './backend.ts';
import { callTool, listTools } from './tools.ts';

export const MCP_SERVER_NAME = 'Stacks';

const INSTRUCTIONS = `Stacks serves the documentation indexed on this self-hosted instance (company-internal docs and imported libraries).
Use it whenever the user asks about a library, framework, SDK, API or tool: setup, configuration, API syntax, version migration, library-specific errors. Prefer it over memory and web search, even for well-known libraries.
Usual flow: resolve-library-id (name -> library ID), then query-docs (library ID + question). search-docs searches up to 4 libraries at once or picks them from the question.`;

// The SDK builds a JSON Schema validator per server (used only for elicitation); one shared instance keeps per-request servers cheap.
const validator = new AjvJsonSchemaValidator();

/**
 * One MCP server exposing the Stacks tools over the given backend. The low-level SDK Server is
 * used (not McpServer) so that tools/list shows the canonical input schemas while tools/call still
 * accepts the argument aliases of the hosted tools, and so that invalid input is a tool error.
 */
export function createMcpServer(backend: DocsBackend, options: { version: string; onUnexpected?: (err: unknown) => void }): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, title: 'Stacks documentation search', version: options.version },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: validator },
  );
  const tools = listTools();
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (req) => callTool(backend, req.params.name, req.params.arguments, options.onUnexpected));
  return server;
}
