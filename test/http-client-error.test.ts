import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { clientErrorAnswer } from '../server/http/client-error.ts';

/** Requests that Node's HTTP parser rejects before Express sees them get the usual {error, message} body. */
let s: TestServer;

before(async () => {
  s = await startTestServer({ overrides: { embedder: null } });
});

after(async () => {
  await s?.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes on a new connection and reads until the server closes it. */
function raw(data: string): Promise<RawResponse> {
  const port = new URL(s.url).port;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error('no answer')));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = (head ?? '').split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(data);
  });
}

function assertJsonError(r: RawResponse, status: number, code: string): void {
  assert.equal(r.status, status, JSON.stringify(r));
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(r.headers.connection, 'close');
  assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body));
  const body = JSON.parse(r.body) as { error: string; message: string };
  assert.equal(body.error, code);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
}

test('headers larger than the limit: 431 with {error, message}', async () => {
  const r = await raw(`GET /api/v3/search?query=x HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assertJsonError(r, 431, 'request_header_fields_too_large');
});

test('a malformed request line or header: 400 validation_error with {error, message}', async () => {
  assertJsonError(await raw('NOT A REQUEST\r\n\r\n'), 400, 'validation_error');
  assertJsonError(await raw('GET / HTTP/1.1\r\nHost: localhost\r\nBad Header Line\r\n\r\n'), 400, 'validation_error');
  assertJsonError(await raw('GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'), 400, 'validation_error');
});

test('a client that goes away mid-request leaves the server answering', async () => {
  const port = Number(new URL(s.url).port);
  await new Promise<void>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nBad Header Line\r\n\r\n');
      socket.resetAndDestroy();
      resolve();
    });
  });
  await new Promise((r) => setTimeout(r, 100));
  const res = await s.api('/ping');
  assert.equal(res.status, 200);
});

test('the answer chosen for each parser error code', () => {
  assert.deepEqual(clientErrorAnswer(Object.assign(new Error('x'), { code: 'HPE_HEADER_OVERFLOW' })).status, 431);
  assert.deepEqual(clientErrorAnswer(Object.assign(new Error('x'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })).body.error, 'request_timeout');
  assert.deepEqual(clientErrorAnswer(Object.assign(new Error('x'), { code: 'HPE_CHUNK_EXTENSIONS_OVERFLOW' })).body.error, 'payload_too_large');
  assert.deepEqual(clientErrorAnswer(Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD', reason: 'Invalid method encountered' })).body, {
    error: 'validation_error',
    message: 'The request is not valid HTTP: invalid method encountered.',
  });
});
