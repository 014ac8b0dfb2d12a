// `npm run bench -- mcp [--clients 16] [--seconds 30] [--corpus generated|shared] [--rest]`
// p50/p95/p99 of a query-docs tools/call over Streamable HTTP (/mcp) with concurrent MCP SDK clients.
// The server runs as its own process (`stacks serve`) so that client work does not share its event loop.
// Corpus: the 1M-snippet generated corpus of bench/corpus.ts (ensureBenchCorpus) by default;
// `--corpus shared` uses the real bundles of test/fixtures/corpus (small, for a quick check).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startStacksProcess } from '../test/helpers/server.ts';
import { BENCH_QUESTIONS as QUERIES, httpFetch, httpGet, memoryOf, percentile } from './stats.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { createServices, onSqlite } from '../server/services.ts';

const { values: opts } = parseArgs({
  options: {
    clients: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '5' },
    corpus: { type: 'string', default: 'generated' },
    /** Also measure GET /api/v2/context?type=txt with the same clients and questions, to show what MCP adds. */
    rest: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const CLIENTS = Number(opts.clients);
const SECONDS = Number(opts.seconds);

interface Corpus {
  dataDir: string;
  label: string;
  /** Calls to make, in order: a library and a question about it. */
  samples: { libraryId: string; query: string }[];
  /** Removed after the run. */
  temporary: boolean;
}

async function generatedCorpus(): Promise<Corpus> {
  const file = path.join(import.meta.dirname, 'corpus.ts');
  if (!fs.existsSync(file))
    throw new Error('bench/corpus.ts (the 1M-snippet generator of the retrieval benchmark) is not in this checkout; run with --corpus shared');
  const { ensureBenchCorpus } = (await import(file)) as {
    ensureBenchCorpus: () => Promise<{ dataDir: string; snippets: number; libraryIds: string[]; samples: { libraryId: string; query: string }[] }>;
  };
  const c = await ensureBenchCorpus();
  return { dataDir: c.dataDir, label: `generated corpus (${c.snippets} snippets, ${c.libraryIds.length} libraries)`, samples: c.samples, temporary: false };
}

async function sharedCorpus(): Promise<Corpus> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-mcp-'));
  const config = loadConfig({ dataDir, logLevel: 'warn' }, {});
  const services = onSqlite(await createServices(config, createLogger('warn')));
  const { loadCorpusBundles } = await import('../test/helpers/mcp.ts');
  const ids = await loadCorpusBundles(services, ['fastify', 'fastify-v4.29.1', 'fastify-v3.29.5', 'vite', 'hono', 'pino', 'zod']);
  const count = services.store.libraries.allCurrentVersions().reduce((n, v) => n + v.totalSnippets, 0);
  services.store.close();
  return {
    dataDir,
    label: `shared corpus (${count} snippets, ${ids.length} library versions)`,
    samples: ids.flatMap((libraryId) => QUERIES.map((query) => ({ libraryId, query }))),
    temporary: true,
  };
}

async function main(): Promise<void> {
  const corpus = opts.corpus === 'shared' ? await sharedCorpus() : await generatedCorpus();
  console.log(`corpus: ${corpus.label}; ${CLIENTS} concurrent MCP clients; ${SECONDS}s measured after ${opts.warmup}s warm-up`);
  const { url, child } = await startStacksProcess({ dataDir: corpus.dataDir, env: { STACKS_RATE_LIMIT_PER_MINUTE: '0' } });
  try {
    const clients: Client[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const c = new Client({ name: `bench-${i}`, version: '1.0.0' });
      await c.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { fetch: httpFetch }));
      clients.push(c);
    }
    let seq = 0;
    const next = () => corpus.samples[(seq++ * 7919) % corpus.samples.length]!;
    const mcpCall = async (c: Client) => {
      const { libraryId, query } = next();
      const t0 = performance.now();
      const r = await c.callTool({ name: 'query-docs', arguments: { libraryId, query } });
      return { ms: performance.now() - t0, error: r.isError === true };
    };
    const restCall = async () => {
      const { libraryId, query } = next();
      const t0 = performance.now();
      const res = await httpGet(`${url}/api/v2/context?${new URLSearchParams({ libraryId, query, type: 'txt' })}`);
      return { ms: performance.now() - t0, error: res.status !== 200 };
    };
    type Series = { latencies: number[]; errors: number };
    // With --rest every client alternates an MCP call and a REST call, so both see the same load and cache state.
    const run = async (seconds: number) => {
      const mcp: Series = { latencies: [], errors: 0 };
      const rest: Series = { latencies: [], errors: 0 };
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        clients.map(async (c) => {
          while (performance.now() < end) {
            const r = await mcpCall(c);
            mcp.latencies.push(r.ms);
            if (r.error) mcp.errors++;
            if (opts.rest) {
              const q = await restCall();
              rest.latencies.push(q.ms);
              if (q.error) rest.errors++;
            }
          }
        }),
      );
      mcp.latencies.sort((a, b) => a - b);
      rest.latencies.sort((a, b) => a - b);
      return { mcp, rest };
    };
    await run(Number(opts.warmup));
    const t0 = performance.now();
    const { mcp, rest } = await run(SECONDS);
    const elapsed = (performance.now() - t0) / 1000;
    const f = (x: number) => x.toFixed(1);
    const line = (name: string, r: Series) =>
      `${name}: calls=${r.latencies.length} errors=${r.errors} rate=${f(r.latencies.length / elapsed)}/s  ` +
      `p50=${f(percentile(r.latencies, 50))} p95=${f(percentile(r.latencies, 95))} p99=${f(percentile(r.latencies, 99))} max=${f(r.latencies[r.latencies.length - 1] ?? NaN)} ms`;
    console.log(line('query-docs over /mcp', mcp));
    if (opts.rest) console.log(line('GET /api/v2/context (same clients, alternating)', rest));
    console.log(
      `target p95 < 50 ms: ${percentile(mcp.latencies, 95) < 50 ? 'met' : 'NOT met'}; server peak RSS ${Math.round(memoryOf(child.pid!).peak)} MB; load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    await Promise.all(clients.map((c) => c.close()));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    if (corpus.temporary) fs.rmSync(corpus.dataDir, { recursive: true, force: true });
  }
}

await main();
