import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { httpMcpClient, loadCorpusBundles, textOf } from './helpers/mcp.ts';

// One server with real corpus libraries imported through the writer; every MCP call goes over real HTTP.
let s: TestServer;

before(async () => {
  s = await startTestServer();
  await loadCorpusBundles(s.services, ['pino', 'zod', 'fastify', 'fastify-v4.29.1']);
});
after(async () => {
  await s?.close();
});

async function contextText(libraryId: string, query: string): Promise<string> {
  const res = await s.api(`/api/v2/context?${new URLSearchParams({ libraryId, query, type: 'txt' })}`);
  assert.equal(res.status, 200, await res.clone().text());
  return res.text();
}

describe('MCP over Streamable HTTP', () => {
  test('lists the three tools with their input schemas and read-only annotations', async () => {
    const c = await httpMcpClient(s.url);
    try {
      const { tools } = await c.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      assert.deepEqual([...byName.keys()].sort(), ['query-docs', 'resolve-library-id', 'search-docs']);
      const required = (name: string) => (byName.get(name)!.inputSchema as { required?: string[] }).required?.slice().sort();
      assert.deepEqual(required('resolve-library-id'), ['libraryName', 'query']);
      assert.deepEqual(required('query-docs'), ['libraryId', 'query']);
      assert.deepEqual(required('search-docs'), ['query']);
      const search = byName.get('search-docs')!.inputSchema as { properties: Record<string, { maxItems?: number; type?: string }> };
      assert.equal(search.properties.libraries?.maxItems, 4);
      assert.ok(search.properties.version, 'search-docs takes a version');
      for (const t of tools) {
        assert.equal(t.annotations?.readOnlyHint, true, t.name);
        assert.equal(t.annotations?.idempotentHint, true, t.name);
        assert.equal(t.annotations?.destructiveHint, false, t.name);
        assert.ok((t.description ?? '').length > 100, `${t.name} tells an agent when to call it`);
      }
      assert.match(byName.get('query-docs')!.description!, /resolve-library-id/);
    } finally {
      await c.close();
    }
  });

  test('resolve-library-id lists a corpus library with ID, snippet count, reputation, versions and source', async () => {
    const c = await httpMcpClient(s.url);
    try {
      const r = await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'structured JSON logging' } });
      assert.notEqual(r.isError, true, textOf(r));
      const text = textOf(r);
      assert.match(text, /^Available Libraries:/);
      const first = text.split('----------')[0]!;
      assert.match(first, /- Title: Pino/);
      assert.match(first, /- Library ID: \/pinojs\/pino/);
      assert.match(first, /- Description: Super fast, all natural JSON logger/);
      assert.match(first, /- Code Snippets: \d+/);
      assert.match(first, /- Source Reputation: (High|Medium|Low|Unknown)/);

      const f = textOf(await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'fastify', query: 'plugins' } }));
      const fastify = f.split('----------').find((b) => b.includes('- Library ID: /fastify/fastify'));
      assert.ok(fastify, f);
      assert.match(fastify!, /- Versions: .*v4\.29\.1/);

      const none = await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'qxzvbnmlkj', query: 'nothing like this' } });
      assert.notEqual(none.isError, true, 'no match is an answer, not a tool failure');
      assert.match(textOf(none), /No documentation libraries found/);
    } finally {
      await c.close();
    }
  });

  test('query-docs answers the same text as /api/v2/context, also through every argument alias', async () => {
    const c = await httpMcpClient(s.url);
    try {
      const query = 'How do I redact sensitive fields from log output?';
      const expected = await contextText('/pinojs/pino', query);
      assert.match(expected, /redact/i);
      const r = await c.callTool({ name: 'query-docs', arguments: { libraryId: '/pinojs/pino', query } });
      assert.notEqual(r.isError, true, textOf(r));
      assert.equal(textOf(r), expected);
      for (const idKey of ['context7CompatibleLibraryID', 'libraryID', 'libraryName']) {
        for (const qKey of ['query', 'userQuery', 'question']) {
          const a = await c.callTool({ name: 'query-docs', arguments: { [idKey]: '/pinojs/pino', [qKey]: query } });
          assert.equal(textOf(a), expected, `${idKey} + ${qKey}`);
        }
      }
      const v4 = await c.callTool({ name: 'query-docs', arguments: { libraryId: '/fastify/fastify/v4.29.1', query: 'register a plugin' } });
      assert.equal(textOf(v4), await contextText('/fastify/fastify/v4.29.1', 'register a plugin'));
      const aliasResolve = await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'zod', question: 'schema validation' } });
      assert.match(textOf(aliasResolve), /\/colinhacks\/zod/);
    } finally {
      await c.close();
    }
  });
});

describe('MCP over Streamable HTTP: search-docs', () => {
  test('search-docs answers across libraries from indexed data', async () => {
    const c = await httpMcpClient(s.url);
    try {
      const r = await c.callTool({ name: 'search-docs', arguments: { query: 'validate a request body schema', libraries: ['zod', '/fastify/fastify'] } });
      assert.notEqual(r.isError, true, textOf(r));
      const text = textOf(r);
      assert.ok(text.includes('/colinhacks/zod') || text.includes('/fastify/fastify'), text.slice(0, 500));
      const res = await s.api(
        `/api/v3/search?${new URLSearchParams([
          ['query', 'validate a request body schema'],
          ['library', 'zod'],
          ['library', '/fastify/fastify'],
          ['type', 'txt'],
        ])}`,
      );
      assert.equal(res.status, 200);
      assert.equal(text, await res.text(), 'same text as /api/v3/search');
      const single = await c.callTool({ name: 'search-docs', arguments: { question: 'child loggers', library: 'pino' } });
      assert.match(textOf(single), /\/pinojs\/pino/);
      const versioned = await c.callTool({ name: 'search-docs', arguments: { query: 'register a plugin', libraries: ['fastify'], version: '4.29.1' } });
      assert.notEqual(versioned.isError, true, textOf(versioned));
      assert.match(textOf(versioned), /fastify/i);
      assert.doesNotMatch(textOf(versioned), /^Note:/, 'an indexed version is served as asked');
      const fallback = await c.callTool({ name: 'search-docs', arguments: { query: 'register a plugin', libraries: ['fastify'], version: '2.1' } });
      assert.notEqual(fallback.isError, true, textOf(fallback));
      assert.match(textOf(fallback), /^Note: the requested version is not indexed/);
    } finally {
      await c.close();
    }
  });
});

describe('MCP over Streamable HTTP: errors', () => {
  test('bad inputs give tool errors, and the endpoint keeps serving', async () => {
    const c = await httpMcpClient(s.url);
    try {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['resolve-library-id', { libraryName: 'pino' }, /query is required/],
        ['resolve-library-id', { query: 'x' }, /libraryName is required/],
        ['resolve-library-id', { libraryName: 42, query: 'x' }, /libraryName/],
        ['query-docs', { query: 'x' }, /libraryId is required/],
        ['query-docs', { libraryId: 'pino', query: 'x' }, /not a library ID/],
        ['query-docs', { libraryId: '/pinojs/pino', query: '   ' }, /query/],
        ['query-docs', { libraryId: '/nobody/nothing', query: 'anything' }, /resolve-library-id/],
        ['search-docs', { query: 'x', libraries: ['a', 'b', 'c', 'd', 'e'] }, /libraries/],
        ['search-docs', { query: 'x', version: 'not a version' }, /version/],
        ['search-docs', {}, /query is required/],
        ['no-such-tool', {}, /Unknown tool/],
      ];
      for (const [name, args, message] of cases) {
        const r = await c.callTool({ name, arguments: args });
        assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} -> ${textOf(r)}`);
        assert.match(textOf(r), message, `${name} ${JSON.stringify(args)}`);
      }
      const ok = await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'zod', query: 'schemas' } });
      assert.notEqual(ok.isError, true);
    } finally {
      await c.close();
    }
  });

  test('a malformed JSON-RPC body is refused with a JSON error, GET and DELETE are 405, CORS preflight allows the key headers', async () => {
    const garbage = await fetch(new URL('/mcp', s.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":',
    });
    assert.equal(garbage.status, 400);
    const g = (await garbage.json()) as { error: string; message: string };
    assert.equal(g.error, 'validation_error');
    const get = await fetch(new URL('/mcp', s.url), { headers: { accept: 'text/event-stream' } });
    assert.equal(get.status, 405);
    assert.deepEqual(Object.keys((await get.json()) as object).sort(), ['error', 'message']);
    assert.equal((await fetch(new URL('/mcp', s.url), { method: 'DELETE' })).status, 405);
    const pre = await fetch(new URL('/mcp', s.url), {
      method: 'OPTIONS',
      headers: {
        origin: 'http://editor.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,stacks_api_key,mcp-protocol-version',
      },
    });
    assert.ok(pre.status === 204 || pre.status === 200, String(pre.status));
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /STACKS_API_KEY/i);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Authorization/i);
  });
});

describe('MCP keys', () => {
  test('the key is read from STACKS_API_KEY, Authorization with or without Bearer, or X-API-Key; a wrong key is a 401', async () => {
    const variants: Record<string, string>[] = [
      { STACKS_API_KEY: s.key },
      { authorization: `Bearer ${s.key}` },
      { authorization: s.key },
      { 'x-api-key': s.key },
    ];
    for (const headers of variants) {
      const c = await httpMcpClient(s.url, headers);
      const r = await c.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'pino', query: 'logger' } });
      assert.match(textOf(r), /\/pinojs\/pino/, JSON.stringify(Object.keys(headers)));
      await c.close();
    }
    await assert.rejects(httpMcpClient(s.url, { STACKS_API_KEY: 'stk_wrong' }), /401|invalid/i);
    const raw = await fetch(new URL('/mcp', s.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': 'stk_wrong' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(raw.status, 401);
    assert.equal(((await raw.json()) as { error: string }).error, 'invalid_api_key');
  });

  test('anonymous MCP is allowed by default and refused when allowAnonymousSearch is off', async () => {
    const anon = await httpMcpClient(s.url);
    assert.match(textOf(await anon.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'zod', query: 'x' } })), /colinhacks/);
    await anon.close();

    const closed = await startTestServer({ config: { allowAnonymousSearch: false } });
    try {
      await loadCorpusBundles(closed.services, ['pino']);
      const res = await fetch(new URL('/mcp', closed.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      });
      assert.equal(res.status, 401);
      const body = (await res.json()) as { error: string; message: string };
      assert.equal(body.error, 'invalid_api_key');
      assert.match(body.message, /API key/);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', 'the 401 carries CORS headers for browser clients');
      await assert.rejects(httpMcpClient(closed.url), /401|invalid/i);
      // The same setting governs the REST endpoints the official clients call.
      for (const path of [
        '/api/v3/search?query=logger',
        '/api/v2/context?libraryId=/pinojs/pino&query=logger',
        '/api/v2/libs/search?libraryName=pino&query=logger',
      ]) {
        const anon = await closed.api(path, { auth: null });
        assert.equal(anon.status, 401, path);
        assert.equal(((await anon.json()) as { error: string }).error, 'invalid_api_key', path);
        assert.equal((await closed.api(path)).status, 200, `${path} with a key`);
      }
      const member = await closed.services.keys.create({ name: 'dev', memberName: 'dev', role: 'member' });
      const c = await httpMcpClient(closed.url, { STACKS_API_KEY: member.key });
      const r = await c.callTool({ name: 'query-docs', arguments: { libraryId: '/pinojs/pino', query: 'child logger' } });
      assert.notEqual(r.isError, true, textOf(r));
      assert.match(textOf(r), /child/i);
      await c.close();
    } finally {
      await closed.close();
    }
  });
});
