import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Services } from '../../server/services.ts';
import { loadSearchCorpus } from './search-corpus.ts';

/** Imports real corpus bundles (test/fixtures/corpus/bundles/<name>.json) through the writer, as the importer does; returns the library IDs (`/owner/repo[/tag]`). */
export async function loadCorpusBundles(services: Services, names: string[]): Promise<string[]> {
  return (await loadSearchCorpus(services, names)).map((v) => (v.tag ? `${v.id}/${v.tag}` : v.id));
}

/** An MCP SDK client connected over Streamable HTTP to `${baseUrl}/mcp`, with optional extra request headers. */
export async function httpMcpClient(baseUrl: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'stacks-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

/** The text of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}
