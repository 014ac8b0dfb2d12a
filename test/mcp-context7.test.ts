import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Context7, Context7Error } from '@upstash/context7-sdk';
import { freePort, ROOT, startTestServer, stopProcess, waitFor, type TestServer } from './helpers/server.ts';
import { trackChild } from './helpers/lifecycle.ts';
import { loadCorpusBundles, textOf } from './helpers/mcp.ts';

// The published clients of the hosted service, unchanged, pointed at a Stacks instance.
let s: TestServer;
let member: string;

before(async () => {
  s = await startTestServer();
  await loadCorpusBundles(s.services, ['pino', 'zod', 'fastify', 'fastify-v4.29.1']);
  member = (await s.services.keys.create({ name: 'c7', memberName: 'dev', role: 'member' })).key;
});
after(async () => {
  await s?.close();
});

/** Spawns the published @upstash/context7-mcp over stdio with CONTEXT7_API_URL pointing at the test server. */
async function context7Mcp(server: TestServer, env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(ROOT, 'node_modules/@upstash/context7-mcp/dist/index.js')],
    cwd: ROOT,
    // No proxy variables: the package routes every request through HTTP(S)_PROXY when set.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CONTEXT7_API_URL: `${server.url}/api`, OTEL_SDK_DISABLED: 'true', ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', () => {});
  const client = new Client({ name: 'stacks-compat-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The SDK has no base URL option (it always calls https://context7.com/api); its HTTP client's base is set to the instance. */
function context7Sdk(apiKey: string, server: TestServer = s): Context7 {
  const client = new Context7({ apiKey });
  (client as unknown as { httpClient: { baseUrl: string; retry: { attempts: number } } }).httpClient.baseUrl = `${server.url}/api`;
  return client;
}

async function contextText(libraryId: string, query: string): Promise<string> {
  const res = await s.api(`/api/v2/context?${new URLSearchParams({ libraryId, query })}`, { auth: null });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/, 'text is the default rendering');
  return res.text();
}

describe('@upstash/context7-mcp (published package) against Stacks', () => {
  test('resolve-library-id finds a corpus library and query-docs returns its snippets (anonymous)', async () => {
    const c = await context7Mcp(s);
    try {
      const names = (await c.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['query-docs', 'resolve-library-id']);
      const resolved = textOf(await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'fast JSON logging for Node.js' } }));
      assert.match(resolved, /Available Libraries/);
      assert.match(resolved, /Context7-compatible library ID: \/pinojs\/pino/);
      assert.match(resolved, /Code Snippets: \d+/);

      const fastify = textOf(await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'fastify', query: 'plugins' } }));
      assert.match(fastify, /\/fastify\/fastify/);
      assert.match(fastify, /Versions: .*v4\.29\.1/);

      const q = 'How do I redact sensitive fields from log output?';
      const docs = textOf(await c.callTool({ name: 'query-docs', arguments: { libraryId: '/pinojs/pino', query: q } }));
      assert.equal(docs, await contextText('/pinojs/pino', q));
      assert.match(docs, /redact/i);

      const versioned = textOf(await c.callTool({ name: 'query-docs', arguments: { libraryId: '/fastify/fastify/v4.29.1', query: 'register a plugin' } }));
      assert.equal(versioned, await contextText('/fastify/fastify/v4.29.1', 'register a plugin'));
    } finally {
      await c.close();
    }
  });

  test('CONTEXT7_API_KEY is sent as a bearer key; a wrong key or an unknown library shows our error message', async () => {
    const c = await context7Mcp(s, { CONTEXT7_API_KEY: member });
    try {
      const docs = textOf(await c.callTool({ name: 'query-docs', arguments: { libraryId: '/colinhacks/zod', query: 'parse a string schema' } }));
      assert.match(docs, /z\.string|parse/);
      const unknown = textOf(await c.callTool({ name: 'query-docs', arguments: { libraryId: '/nobody/nothing', query: 'anything' } }));
      assert.match(unknown, /\/nobody\/nothing/, 'the message of our error body is shown');
      const noLib = textOf(await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'qxzvbnmlkj', query: 'anything' } }));
      assert.doesNotMatch(noLib, /Context7-compatible library ID/);
      assert.ok(noLib.length > 0);
    } finally {
      await c.close();
    }
    const wrong = await context7Mcp(s, { CONTEXT7_API_KEY: 'stk_wrong' });
    try {
      const r = textOf(await wrong.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'logging' } }));
      assert.match(r, /API key is invalid/);
    } finally {
      await wrong.close();
    }
  });
});

test('@upstash/context7-mcp in HTTP mode forwards the client key to Stacks', async () => {
  const port = await freePort();
  const child = trackChild(
    spawn(process.execPath, [path.join(ROOT, 'node_modules/@upstash/context7-mcp/dist/index.js'), '--transport', 'http', '--port', String(port)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CONTEXT7_API_URL: `${s.url}/api`, OTEL_SDK_DISABLED: 'true' },
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  try {
    await waitFor(() => /running on HTTP/.test(err), 20_000);
    const connect = async (key: string) => {
      const c = new Client({ name: 'stacks-compat-test', version: '1.0.0' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
      );
      return c;
    };
    const c = await connect(member);
    try {
      const docs = textOf(await c.callTool({ name: 'query-docs', arguments: { libraryId: '/pinojs/pino', query: 'transports' } }));
      assert.equal(docs, await contextText('/pinojs/pino', 'transports'));
    } finally {
      await c.close();
    }
    const wrong = await connect('stk_wrong');
    try {
      assert.match(textOf(await wrong.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'x' } })), /API key is invalid/);
    } finally {
      await wrong.close();
    }
  } finally {
    await stopProcess(child);
  }
});

test('@upstash/context7-mcp against an instance that refuses anonymous search: the key is needed and used', async () => {
  const closed = await startTestServer({ config: { allowAnonymousSearch: false } });
  try {
    await loadCorpusBundles(closed.services, ['pino']);
    const anon = await context7Mcp(closed);
    try {
      assert.match(textOf(await anon.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'x' } })), /API key is required/);
    } finally {
      await anon.close();
    }
    const keyed = await context7Mcp(closed, { CONTEXT7_API_KEY: closed.key });
    try {
      assert.match(textOf(await keyed.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'x' } })), /\/pinojs\/pino/);
    } finally {
      await keyed.close();
    }
  } finally {
    await closed.close();
  }
});

describe('@upstash/context7-sdk (published package) against Stacks', () => {
  test('searchLibrary in json and txt', async () => {
    const sdk = context7Sdk(member);
    const libs = await sdk.searchLibrary('schema validation', 'zod', { type: 'json' });
    const zod = libs.find((l) => l.id === '/colinhacks/zod');
    assert.ok(zod, JSON.stringify(libs));
    assert.equal(typeof zod!.name, 'string');
    assert.ok(zod!.totalSnippets > 0);
    assert.equal(typeof zod!.trustScore, 'number');
    const txt = await sdk.searchLibrary('fast logging', 'pino', { type: 'txt' });
    assert.match(txt, /Context7-compatible library ID: \/pinojs\/pino/);
  });

  test('getContext in json and txt', async () => {
    const sdk = context7Sdk(member);
    const q = 'child loggers';
    const docs = await sdk.getContext(q, '/pinojs/pino', { type: 'json' });
    assert.ok(docs.length > 0);
    for (const d of docs) {
      assert.equal(typeof d.title, 'string');
      assert.ok(d.content.length > 0);
    }
    assert.ok(
      docs.some((d) => /child/i.test(d.content)),
      'snippets about the question',
    );
    assert.ok(
      docs.some((d) => typeof d.source === 'string' && d.source.startsWith('https://github.com/pinojs/pino')),
      'sources are the original URLs',
    );
    const txt = await sdk.getContext(q, '/pinojs/pino', { type: 'txt' });
    assert.equal(txt, await contextText('/pinojs/pino', q));
  });

  test('errors surface as Context7Error carrying our error code', async () => {
    const sdk = context7Sdk(member);
    await assert.rejects(
      sdk.getContext('x', 'not-an-id', { type: 'json' }),
      (err: unknown) => err instanceof Context7Error && /invalid_library_id|validation_error/.test(err.message),
    );
    await assert.rejects(sdk.searchLibrary('x', 'qxzvbnmlkj'), (err: unknown) => err instanceof Context7Error && err.message === 'no_libraries_found');
    const wrong = context7Sdk('stk_wrong');
    await assert.rejects(wrong.searchLibrary('x', 'pino'), (err: unknown) => err instanceof Context7Error && err.message === 'invalid_api_key');
  });
});
