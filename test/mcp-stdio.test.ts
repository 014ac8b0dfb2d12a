import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { createServices, onSqlite } from '../server/services.ts';
import { runCli } from './helpers/cli.ts';
import { ROOT, stacksEntry, startTestServer, stopProcess, tempDir, type TestServer } from './helpers/server.ts';
import { trackChild } from './helpers/lifecycle.ts';
import { loadCorpusBundles, textOf } from './helpers/mcp.ts';

// `stacks mcp` is spawned as a real child process (stacksEntry(): the compiled program in the suite) and driven by the SDK's stdio client.
let dataDir: string;
let memberKey: string;

// No ranking models are learned here: a process learning them in the background would change the
// answers between the two that the tests compare.
const baseEnv = (): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', STACKS_LEARN_RANKING: 'false' });

before(async () => {
  dataDir = tempDir('stacks-mcp-stdio-');
  const config = loadConfig({ dataDir, logLevel: 'silent', learnRanking: false, embedProvider: 'builtin' }, {});
  const services = onSqlite(await createServices(config, createLogger('silent')));
  try {
    await loadCorpusBundles(services, ['pino', 'zod']);
    memberKey = (await services.keys.create({ name: 'editor', memberName: 'dev', role: 'member' })).key;
  } finally {
    services.store.close();
  }
});

async function stdioClient(args: string[], env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [stacksEntry(), 'mcp', ...args],
    cwd: ROOT,
    env: { ...baseEnv(), ...env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d) => (err += d));
  const client = new Client({ name: 'stacks-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err };
}

describe('stacks mcp over stdio (local data dir)', () => {
  test('lists the tools and answers from the data dir; bad inputs are tool errors', async () => {
    const { client } = await stdioClient(['--data-dir', dataDir]);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['query-docs', 'resolve-library-id', 'search-docs']);
      assert.deepEqual((tools.find((t) => t.name === 'query-docs')!.inputSchema as { required: string[] }).required.sort(), ['libraryId', 'query']);

      const resolved = textOf(await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'json logger' } }));
      assert.match(resolved, /- Library ID: \/pinojs\/pino/);

      const docs = await client.callTool({
        name: 'query-docs',
        arguments: { context7CompatibleLibraryID: '/pinojs/pino', userQuery: 'redact sensitive fields' },
      });
      assert.notEqual(docs.isError, true, textOf(docs));
      assert.match(textOf(docs), /redact/i);

      const search = await client.callTool({ name: 'search-docs', arguments: { query: 'parse an object schema', libraries: ['zod'] } });
      assert.notEqual(search.isError, true, textOf(search));
      assert.match(textOf(search), /\/colinhacks\/zod/);

      const bad = await client.callTool({ name: 'query-docs', arguments: { libraryId: 'zod', query: 'x' } });
      assert.equal(bad.isError, true);
      assert.match(textOf(bad), /not a library ID/);
      const missing = await client.callTool({ name: 'resolve-library-id', arguments: {} });
      assert.equal(missing.isError, true);
    } finally {
      await client.close();
    }
  });

  test('every stdout line is a JSON-RPC message, logs go to stderr, and closing stdin ends the process', async (t) => {
    const child = trackChild(
      spawn(process.execPath, [stacksEntry(), 'mcp', '--data-dir', dataDir, '--log-level', 'info'], {
        cwd: ROOT,
        env: baseEnv(),
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    t.after(() => stopProcess(child, 'SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    child.stdin.write(`${JSON.stringify(init)}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'resolve-library-id', arguments: { libraryName: 'zod', query: 'schemas' } } })}\n`,
    );
    const deadline = Date.now() + 30_000;
    while (!out.includes('"id":2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    assert.equal(code, 0);
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 2, out);
    for (const line of lines) assert.equal((JSON.parse(line) as { jsonrpc: string }).jsonrpc, '2.0');
    assert.match(lines[1]!, /colinhacks/);
    assert.match(err, /running on stdio/, 'info logs are on stderr');
  });
});

describe('stacks mcp over stdio: answers and refusals', () => {
  test('the same answers as the HTTP endpoint over the same data', async (t) => {
    const server = await startTestServer({ dataDir });
    t.after(() => server.close());
    const { client } = await stdioClient(['--data-dir', dataDir, '--api-key', memberKey]);
    try {
      const q = 'child logger bindings';
      const res = await server.api(`/api/v2/context?${new URLSearchParams({ libraryId: '/pinojs/pino', query: q, type: 'txt' })}`);
      assert.equal(res.status, 200);
      const viaStdio = textOf(await client.callTool({ name: 'query-docs', arguments: { libraryId: '/pinojs/pino', query: q } }));
      assert.equal(viaStdio, await res.text());
    } finally {
      await client.close();
    }
  });

  test('a wrong --api-key or a refused anonymous start exits with a message on stderr and nothing on stdout', async () => {
    // Refused before the stdio transport starts: in this process (a real one serves below).
    const wrong = await runCli(['mcp', '--data-dir', dataDir, '--api-key', 'stk_not_a_key']);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /API key is invalid/);
    assert.equal(wrong.stdout, '');
    const anon = await runCli(['mcp', '--data-dir', dataDir], { STACKS_ALLOW_ANONYMOUS_SEARCH: 'false' });
    assert.equal(anon.code, 2);
    assert.match(anon.stderr, /anonymous/);
    assert.equal(anon.stdout, '');
    // With a key (here from STACKS_API_KEY) the same setting lets it serve.
    const { client } = await stdioClient(['--data-dir', dataDir], { STACKS_ALLOW_ANONYMOUS_SEARCH: 'false', STACKS_API_KEY: memberKey });
    try {
      assert.match(textOf(await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'zod', query: 'x' } })), /colinhacks/);
    } finally {
      await client.close();
    }
  });
});

describe('stacks mcp --url (remote instance)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ config: { allowAnonymousSearch: false } });
    await loadCorpusBundles(server.services, ['pino']);
  });
  after(async () => {
    await server?.close();
  });

  test('proxies the tools to the instance REST API with the key', async () => {
    const { client } = await stdioClient(['--url', `${server.url}/api`, '--api-key', server.key]);
    try {
      const resolved = textOf(await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'logger' } }));
      assert.match(resolved, /\/pinojs\/pino/);
      const q = 'custom log levels';
      const viaRemote = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/pinojs/pino', query: q } });
      const res = await server.api(`/api/v2/context?${new URLSearchParams({ libraryId: '/pinojs/pino', query: q, type: 'txt' })}`);
      assert.equal(textOf(viaRemote), await res.text());
      const search = await client.callTool({ name: 'search-docs', arguments: { query: 'transports', libraries: ['/pinojs/pino'] } });
      assert.notEqual(search.isError, true, textOf(search));
      const unknown = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/nobody/nothing', query: 'x' } });
      assert.equal(unknown.isError, true);
    } finally {
      await client.close();
    }
  });

  test('without a key an instance that refuses anonymous search answers a tool error with its message', async () => {
    const { client } = await stdioClient(['--url', server.url]);
    try {
      const r = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'logger' } });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /API key is required.*\(invalid_api_key\)/);
    } finally {
      await client.close();
    }
  });

  test('a wrong key is refused by the instance, and the refusal is a tool error with its message', async () => {
    const { client } = await stdioClient(['--url', server.url, '--api-key', 'stk_wrong']);
    try {
      const r = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'logger' } });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /API key is invalid.*\(invalid_api_key\)/);
    } finally {
      await client.close();
    }
  });
});
