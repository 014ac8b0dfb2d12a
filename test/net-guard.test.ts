import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { checkUrl, safeFetch, classify } from '../lib/net/guard.ts';
import { ApiError } from '../lib/errors.ts';

const open = { allowPrivate: true };
const closed = { allowPrivate: false };

async function rejectsWith(p: Promise<unknown>, code: string, messagePart?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ApiError, `expected ApiError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (messagePart) assert.match(err.message, messagePart);
    return true;
  });
}

let server: http.Server;
let base = '';
let port = 0;
let lastAuth: string | undefined;

before(async () => {
  server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/ok') return res.end('hello');
    if (u.pathname === '/redirect') {
      const n = Number(u.searchParams.get('n'));
      res.writeHead(302, { location: n > 0 ? `/redirect?n=${n - 1}` : '/ok' });
      return res.end();
    }
    if (u.pathname === '/to') {
      res.writeHead(307, { location: u.searchParams.get('target')! });
      return res.end();
    }
    if (u.pathname === '/big') {
      // chunked, no content-length: the limit must hold while streaming
      let sent = 0;
      const push = () => {
        while (sent < 5_000_000) {
          sent += 65536;
          if (!res.write(Buffer.alloc(65536, 97))) return res.once('drain', push);
        }
        res.end();
      };
      return push();
    }
    if (u.pathname === '/bomb') {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      return res.end(zlib.gzipSync(Buffer.alloc(20_000_000, 0)));
    }
    if (u.pathname === '/gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
      return res.end(zlib.gzipSync(Buffer.from('compressed text')));
    }
    if (u.pathname === '/slow') {
      res.writeHead(200);
      res.write('a');
      return setTimeout(() => res.end('b'), 3000).unref();
    }
    if (u.pathname === '/auth') {
      lastAuth = req.headers.authorization;
      return res.end('auth');
    }
    res.writeHead(404);
    res.end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

test('malformed URLs and other schemes are validation errors', async () => {
  await rejectsWith(checkUrl('not a url', open), 'validation_error', /Invalid URL/);
  await rejectsWith(checkUrl('ftp://example.com/x', open), 'validation_error', /http and https/);
  await rejectsWith(checkUrl('file:///etc/passwd', open), 'validation_error');
  await rejectsWith(checkUrl('javascript:alert(1)', open), 'validation_error');
  await rejectsWith(checkUrl('gopher://127.0.0.1:6379/_x', open), 'validation_error');
});

test('link-local, metadata, unspecified and multicast are blocked even when private is allowed', async () => {
  for (const u of [
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.1.1/',
    'http://[fe80::1]/',
    'http://[fd00:ec2::254]/',
    'http://100.100.100.200/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.google.internal./',
    'http://0.0.0.0:8080/',
    'http://[::]/',
    'http://224.0.0.1/',
    'http://[ff02::1]/',
    'http://255.255.255.255/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://0xa9fea9fe/', // WHATWG URL normalizes to 169.254.169.254
  ]) {
    await rejectsWith(checkUrl(u, open), 'forbidden', /not allowed/);
  }
});

test('loopback, RFC 1918, CGNAT and ULA depend on allowPrivate', async () => {
  for (const u of [
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[::1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://localhost/',
  ]) {
    await rejectsWith(checkUrl(u, closed), 'forbidden', /private/);
    const ok = await checkUrl(u, open);
    assert.ok(ok instanceof URL);
  }
});

test('public addresses pass under both policies', async () => {
  for (const u of ['http://8.8.8.8/', 'https://[2606:4700:4700::1111]/', 'http://172.32.0.1/', 'http://100.128.0.1/', 'http://[2001:db8::1]/']) {
    assert.equal((await checkUrl(u, closed)).protocol.startsWith('http'), true);
  }
  assert.equal(classify('1.1.1.1').kind, 'allowed');
  assert.equal(classify('fe80::1%eth0').kind, 'blocked');
  assert.equal(classify('2002:a9fe:a9fe::1').kind, 'blocked', '6to4 wrapping link-local');
  assert.equal(classify('::ffff:7f00:1').kind, 'private');
});

test('unresolvable host is fetch_failed', async () => {
  await rejectsWith(checkUrl('http://no-such-host.invalid/', open), 'fetch_failed', /resolve/);
});

test('safeFetch fetches, decodes gzip and follows up to 5 redirects', async () => {
  const r = await safeFetch(`${base}/ok`, { policy: open, maxBytes: 1000, timeoutMs: 5000 });
  assert.equal(r.status, 200);
  assert.equal(r.body.toString(), 'hello');
  const g = await safeFetch(`${base}/gzip`, { policy: open, maxBytes: 1000, timeoutMs: 5000 });
  assert.equal(g.body.toString(), 'compressed text');
  assert.equal(g.headers.get('content-encoding'), null);
  assert.equal(g.headers.get('content-type'), 'text/plain');
  const five = await safeFetch(`${base}/redirect?n=4`, { policy: open, maxBytes: 1000, timeoutMs: 5000 });
  assert.equal(five.url, `${base}/ok`);
  assert.equal(five.body.toString(), 'hello');
  await rejectsWith(safeFetch(`${base}/redirect?n=5`, { policy: open, maxBytes: 1000, timeoutMs: 5000 }), 'fetch_failed', /redirects/);
  const missing = await safeFetch(`${base}/missing`, { policy: open, maxBytes: 1000, timeoutMs: 5000 });
  assert.equal(missing.status, 404);
});

test('safeFetch re-checks every redirect hop', async () => {
  await rejectsWith(
    safeFetch(`${base}/to?target=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`, { policy: open, maxBytes: 1000, timeoutMs: 5000 }),
    'forbidden',
  );
  await rejectsWith(
    safeFetch(`${base}/to?target=${encodeURIComponent('file:///etc/passwd')}`, { policy: open, maxBytes: 1000, timeoutMs: 5000 }),
    'validation_error',
  );
  // Private target refused when private addresses are disabled, including the first hop.
  await rejectsWith(safeFetch(`${base}/ok`, { policy: closed, maxBytes: 1000, timeoutMs: 5000 }), 'forbidden');
  // A host name resolving to loopback is refused inside the connection's own lookup too.
  await rejectsWith(safeFetch(`http://localhost:${port}/ok`, { policy: closed, maxBytes: 1000, timeoutMs: 5000 }), 'forbidden');
});

test('credentials are not forwarded to another origin', async () => {
  await safeFetch(`${base}/auth`, { policy: open, maxBytes: 1000, timeoutMs: 5000, headers: { Authorization: 'Bearer same' } });
  assert.equal(lastAuth, 'Bearer same');
  await safeFetch(`${base}/to?target=${encodeURIComponent(`http://localhost:${port}/auth`)}`, {
    policy: open,
    maxBytes: 1000,
    timeoutMs: 5000,
    headers: { Authorization: 'Bearer secret' },
  });
  assert.equal(lastAuth, undefined);
});

test('body limits hold while streaming, also after decompression', async () => {
  await rejectsWith(safeFetch(`${base}/big`, { policy: open, maxBytes: 1_000_000, timeoutMs: 10_000 }), 'payload_too_large');
  await rejectsWith(safeFetch(`${base}/bomb`, { policy: open, maxBytes: 1_000_000, timeoutMs: 10_000 }), 'payload_too_large');
});

test('timeout and caller abort', async () => {
  const t0 = Date.now();
  await rejectsWith(safeFetch(`${base}/slow`, { policy: open, maxBytes: 1000, timeoutMs: 300 }), 'fetch_failed', /timed out/);
  assert.ok(Date.now() - t0 < 2500);
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('cancelled by job')), 100);
  await assert.rejects(safeFetch(`${base}/slow`, { policy: open, maxBytes: 1000, timeoutMs: 5000, signal: ac.signal }), /cancelled by job/);
});
