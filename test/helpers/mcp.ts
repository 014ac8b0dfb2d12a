import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Services } from '../../server/services.ts';
import {
  bundleHeaderSchema, bundleTarget, bundleMeta, bundleCodeSnippetSchema, bundleInfoSnippetSchema, codeSnippetInput, infoSnippetInput,
} from '../../server/ingest/bundle.ts';
import { SHARED } from './server.ts';

/** Imports real corpus bundles (../shared/corpus/bundles/<name>.json) through the writer, as the importer does. */
export async function loadCorpusBundles(services: Services, names: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) {
    const file = path.join(SHARED, 'corpus/bundles', `${name}.json`);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { libraries: Record<string, unknown>[] };
    for (const lib of doc.libraries) {
      const header = bundleHeaderSchema.parse(lib);
      const target = bundleTarget(header);
      if (!target) throw new Error(`bundle ${name}: bad project ${header.project}`);
      const build = services.writer.begin(bundleMeta(header, target.id), { tag: target.tag });
      const code = (lib.codeSnippets as unknown[]).map((s) => codeSnippetInput(bundleCodeSnippetSchema.parse(s)));
      const info = (lib.infoSnippets as unknown[]).map((s) => infoSnippetInput(bundleInfoSnippetSchema.parse(s)));
      const all = [...code, ...info];
      for (let i = 0; i < all.length; i += 500) await build.add(all.slice(i, i + 500));
      build.commit();
      ids.push(target.tag ? `${target.id}/${target.tag}` : target.id);
    }
  }
  return ids;
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
