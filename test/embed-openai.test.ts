import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAIEmbedder, embeddingsUrl } from '../server/embed/openai.ts';
import { createEmbedder, loadBuiltin } from '../server/embed/index.ts';
import { cosine } from '../server/embed/builtin.ts';
import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { startTestServer, tempDir } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';

const log = createLogger('silent');
const builtin = await loadBuiltin(tempDir(), log);

interface Seen {
  auth: string | undefined;
  body: { model: string; input: string[]; encoding_format?: string; dimensions?: number };
}
/** What the fake endpoint does next: 'ok', or a failure mode. */
let mode: 'ok' | 'constant' | '401' | '500-once' | 'slow' | 'garbage' | 'short' | 'ignore-dims' = 'ok';
const seen: Seen[] = [];

// A real HTTP server speaking the /v1/embeddings protocol. Its vectors come from the builtin
// embedder, scaled by 3 (not unit length) and returned in reverse order with their index.
const server = http.createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => (raw += d));
  req.on('end', () => {
    if (req.url !== '/v1/embeddings' || req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'no such route' } }));
      return;
    }
    const body = JSON.parse(raw) as Seen['body'];
    seen.push({ auth: req.headers.authorization, body });
    if (mode === '401') return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"Incorrect API key"}}');
    if (mode === '500-once') {
      mode = 'ok';
      return void res.writeHead(503, { 'retry-after': '0' }).end('busy');
    }
    if (mode === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"result":[]}');
    if (mode === 'slow') return void setTimeout(() => res.writeHead(200).end('{"data":[]}'), 1500);
    const dims = mode === 'ignore-dims' ? 100 : (body.dimensions ?? 100);
    let data = body.input.map((text, index) => {
      const v = mode === 'constant' ? new Float32Array(dims).fill(1) : builtin.embedOne(text).slice(0, dims);
      return { object: 'embedding', index, embedding: Array.from(v, (x) => x * 3) };
    });
    if (mode === 'short') data = data.slice(1);
    data.reverse();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model }));
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
after(() => server.close());

test('embeddings URL: base, /v1 and full forms; other schemes refused', () => {
  assert.equal(embeddingsUrl('http://emb.internal:8080').href, 'http://emb.internal:8080/v1/embeddings');
  assert.equal(embeddingsUrl('http://emb.internal:8080/v1/').href, 'http://emb.internal:8080/v1/embeddings');
  assert.equal(embeddingsUrl('https://gw.corp/openai/v1/embeddings').href, 'https://gw.corp/openai/v1/embeddings');
  assert.throws(() => embeddingsUrl('file:///etc/passwd'), /must use http or https, not file/);
  assert.throws(() => embeddingsUrl('ftp://x/v1'), /not ftp/);
  assert.throws(() => embeddingsUrl('not a url'), /not a valid URL/);
});

test('probes the dimension, batches, restores order, normalizes, sends model and key', async () => {
  mode = 'ok';
  seen.length = 0;
  const e = await OpenAIEmbedder.create({ url: base, model: 'test-model', apiKey: 'sk-test', batchSize: 64 });
  assert.equal(e.dims, 100);
  assert.equal(e.id, 'openai:test-model');
  assert.equal(seen.length, 1, 'one probe request');
  const texts = Array.from({ length: 150 }, (_, i) => `text number ${i} about ${i % 2 ? 'databases' : 'networking'}`);
  texts[5] = '';
  const vectors = await e.embed(texts);
  assert.equal(seen.length, 4, 'probe + 3 batches of at most 64');
  assert.deepEqual(
    seen.slice(1).map((s) => s.body.input.length),
    [64, 64, 22],
  );
  for (const s of seen) {
    assert.equal(s.auth, 'Bearer sk-test');
    assert.equal(s.body.model, 'test-model');
    assert.equal(s.body.encoding_format, 'float');
    assert.equal(s.body.dimensions, undefined, 'not sent unless configured');
  }
  assert.equal(seen[1]!.body.input[5], '(empty)', 'empty input replaced: endpoints reject it');
  assert.equal(vectors.length, 150);
  for (const [i, v] of vectors.entries()) {
    assert.ok(Math.abs(cosine(v, v) - 1) < 1e-5, 'unit length');
    if (i !== 5) assert.ok(cosine(v, builtin.embedOne(texts[i]!)) > 0.9999, `vector ${i} is the one for its own text`);
  }
});

test('configured dims are sent and checked', async () => {
  mode = 'ok';
  seen.length = 0;
  const e = await OpenAIEmbedder.create({ url: `${base}/v1`, model: 'm', dims: 32 });
  assert.equal(seen.length, 0, 'no probe when the dimension is configured');
  const [v] = await e.embed(['hello world']);
  assert.equal(v!.length, 32);
  assert.equal(seen[0]!.body.dimensions, 32);
  assert.equal(seen[0]!.auth, undefined, 'no key configured, no header');
  mode = 'short';
  await assert.rejects(
    e.embed(['a', 'b']),
    (err: Error & { code?: string }) => err.code === 'embedding_failed' && /returned 1 embeddings for 2 texts/.test(err.message),
  );
});

test('clear errors: 401, bad body, timeout, unreachable; 5xx is retried', async () => {
  const e = await OpenAIEmbedder.create({ url: base, model: 'm', dims: 100, timeoutMs: 300, retries: 1 });
  mode = '401';
  await assert.rejects(
    e.embed(['x']),
    (err: Error & { code?: string; status?: number }) =>
      err.code === 'embedding_failed' && err.status === 503 && /answered 401 \(check STACKS_EMBED_API_KEY\): .*Incorrect API key/.test(err.message),
  );
  mode = 'garbage';
  await assert.rejects(e.embed(['x']), /unexpected body/);
  mode = 'slow';
  await assert.rejects(e.embed(['x']), /no answer within 300 ms/);
  mode = '500-once';
  seen.length = 0;
  const [v] = await e.embed(['retried text']);
  assert.equal(seen.length, 2, 'failed once, retried once');
  assert.equal(v!.length, 100);
  // A server that ignores `dimensions` and answers with its own size: named in the error.
  mode = 'ignore-dims';
  const mismatch = await OpenAIEmbedder.create({ url: `${base}/v1/embeddings`, model: 'm', dims: 64 });
  await assert.rejects(mismatch.embed(['ok']), /returned 100 dimensions, expected 64 \(set STACKS_EMBED_DIMS/);
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const dead = await OpenAIEmbedder.create({ url: `http://127.0.0.1:${deadPort}`, model: 'm', dims: 8, retries: 0 });
  await assert.rejects(dead.embed(['x']), /Embedding endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings failed: fetch failed/);
});

test('startup: the openai provider passes the self-check, a constant endpoint fails it, other schemes are refused', async () => {
  mode = 'ok';
  const config = loadConfig({ dataDir: tempDir(), embedProvider: 'openai', embedUrl: base, embedModel: 'test-model' }, {});
  const e = await createEmbedder(config, log);
  assert.equal(e.id, 'openai:test-model');
  mode = 'constant';
  await assert.rejects(createEmbedder(config, log), /Embedder self-check failed \(openai:test-model\): different texts gave the same vector/);
  const ftp = loadConfig({ dataDir: tempDir(), embedProvider: 'openai', embedUrl: 'ftp://127.0.0.1/v1' }, {});
  await assert.rejects(createEmbedder(ftp, log), /must use http or https/);
  // Through the real server: startup stops with the same message.
  await assert.rejects(startTestServer({ config: { embedProvider: 'openai', embedUrl: base, embedModel: 'test-model' } }), /self-check failed/);
  mode = 'ok';
  const s = await startTestServer({ config: { embedProvider: 'openai', embedUrl: base, embedModel: 'test-model', embedDims: 48 } });
  try {
    assert.equal(s.services.embedder?.id, 'openai:test-model');
    assert.equal(s.services.embedder?.dims, 48);
    assert.equal((await s.api('/ping', { auth: null })).status, 200);
  } finally {
    await s.close();
  }
});

test('the embedding endpoint going down: context and search answer lexically, marked partial', async () => {
  mode = 'ok';
  const s = await startTestServer({ config: { embedProvider: 'openai', embedUrl: base, embedModel: 'test-model' } });
  try {
    await loadSearchCorpus(s.services, ['pino']);
    const ok = await s.api('/api/v2/context?libraryId=/pinojs/pino&query=redact%20sensitive%20keys&type=json', { auth: null });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-stacks-search-status'), null);
    mode = '401';
    const context = await s.api('/api/v2/context?libraryId=/pinojs/pino&query=redact%20sensitive%20keys&type=json', { auth: null });
    assert.equal(context.status, 200);
    assert.equal(context.headers.get('x-stacks-search-status'), 'partial');
    assert.equal(context.headers.get('x-stacks-search-reason'), 'partialSearchFailure');
    const body = (await context.json()) as { codeSnippets: { codeId: string }[]; infoSnippets: { pageId: string }[] };
    assert.ok(
      [...body.codeSnippets.map((c) => c.codeId), ...body.infoSnippets.map((i) => i.pageId)].some((u) => /redaction/.test(u)),
      'the lexical answer still finds the redaction page',
    );
    const search = await s.api('/api/v3/search?query=redact%20sensitive%20keys&library=pino', { auth: null });
    assert.equal(search.status, 200);
    assert.equal(search.headers.get('x-stacks-search-reason'), 'partialSearchFailure');
  } finally {
    mode = 'ok';
    await s.close();
  }
});
