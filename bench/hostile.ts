// `npm run bench -- hostile [--requests 10000] [--clients 8] [--keep DIR]`
// Issue 41's figure: 8 concurrent clients send 10,000 mixed bad requests to a real `stacks serve`
// holding the eleven reference corpora (sentence model on); no request may take over 2 s and none may answer 5xx.
// The mix: every text parameter of every operation at its longest and worst shape
// (test/helpers/hostile.ts), with the owner's key and anonymously, truncated and malformed JSON,
// cut-off multipart bodies, bad keys, unknown routes, bad percent-encoding and oversized URLs.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { devLicense, spawnStacks, startStacksProcess, stopProcess, tempDir } from '../test/helpers/server.ts';
import { CORPUS_BUNDLES } from '../test/helpers/fixtures.ts';
import { hostileRequests, type HostileRequest } from '../test/helpers/hostile.ts';
import { OPERATIONS } from '../server/contracts/index.ts';
import { percentile } from './stats.ts';
import { rng } from '../test/helpers/rng.ts';

const { values: opts } = parseArgs({
  options: { requests: { type: 'string', default: '10000' }, clients: { type: 'string', default: '8' }, keep: { type: 'string' } },
  allowPositionals: true,
});
const total = Number(opts.requests);
const clients = Number(opts.clients);

// The sentence model as shipped, its vectors of the reference corpora from the test cache (no minutes of embedding first).
const model = { STACKS_EMBED_PROVIDER: 'model', STACKS_EMBED_CACHE: path.join(import.meta.dirname, '../test/fixtures/model/corpus.vcache') };
const dataDir = opts.keep ?? tempDir('stacks-bench-hostile-');
fs.mkdirSync(dataDir, { recursive: true });
if (!fs.existsSync(path.join(dataDir, 'stacks.db'))) {
  // Imports need a license: the development one, in development mode (as the tests).
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  for (const file of fs
    .readdirSync(CORPUS_BUNDLES)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const child = spawnStacks(['import', path.join(CORPUS_BUNDLES, file), '--data-dir', dataDir, '--dev', '--no-progress'], model);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`import ${file} failed (${code})`);
  }
}
const server = await startStacksProcess({ dataDir, args: ['--dev'], env: { STACKS_LEARN_RANKING: 'false', ...model } });
if (!server.key) throw new Error('no owner key printed: give --keep a new directory');
const key = server.key;

/** A raw request (method, path, headers, body, and whether to cut the body off mid-way with chunked encoding). */
interface Raw extends HostileRequest {
  cut?: boolean;
}

function malformed(): Raw[] {
  const out: Raw[] = [];
  const json = { 'content-type': 'application/json' };
  for (const op of OPERATIONS.filter((o) => o.http.method !== 'get')) {
    const p = op.http.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'id' ? '999999' : 'x'));
    for (const body of ['{"name": "abc', '{', '[1,2', '{"a":'.repeat(5000), 'null', '"x"'])
      out.push({ label: `${op.id} malformed json`, method: op.http.method.toUpperCase(), path: p, body, headers: json });
  }
  const boundary = 'stacksbench';
  const part = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.json"\r\ncontent-type: application/json\r\n\r\n{"libraries": [`;
  for (const p of ['/api/import-libraries', '/api/v2/add/file-upload', '/api/v2/add/openapi/upload'])
    out.push({
      label: `${p} cut-off multipart`,
      method: 'POST',
      path: p,
      body: part,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      cut: true,
    });
  out.push({ label: 'bad key', method: 'GET', path: '/api/v3/search?query=x', headers: { authorization: 'Bearer stk_000000000000000000000000000000' } });
  out.push({ label: 'unknown route', method: 'GET', path: '/api/v9/nothing', headers: {} });
  out.push({ label: 'bad percent-encoding', method: 'GET', path: '/api/v3/search?query=%E0%A4%A', headers: {} });
  out.push({ label: 'bad percent-encoding in path', method: 'GET', path: '/api/libraries/%E0%A4%A', headers: {} });
  out.push({ label: 'long URL', method: 'GET', path: `/api/v3/search?query=${'x'.repeat(20_000)}`, headers: {} });
  out.push({ label: 'repeated parameter', method: 'GET', path: `/api/v3/search?${'library=a&'.repeat(500)}query=x`, headers: {} });
  return out;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const base = new URL(server.url);

function send(r: Raw, auth: boolean): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const t = performance.now();
    const headers: Record<string, string> = { ...r.headers };
    if (auth) headers.authorization ??= `Bearer ${key}`;
    if (r.body !== undefined && !r.cut) headers['content-length'] = String(Buffer.byteLength(r.body));
    const req = http.request({ host: base.hostname, port: base.port, method: r.method, path: r.path, headers, agent: r.cut ? false : agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
    });
    // A connection the server closes on a cut-off body is an answer too (status 0), not a hang.
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t }));
    // A cut-off body has no length: it goes chunked and ends without its closing boundary.
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

const pool: Raw[] = [...hostileRequests(OPERATIONS), ...malformed()];
const random = rng(41);
const order = Array.from({ length: total }, () => pool[Math.floor(random() * pool.length)]!);
const results: { label: string; status: number; ms: number }[] = [];
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: clients }, async () => {
    while (next < order.length) {
      const i = next++;
      const r = order[i]!;
      const res = await send(r, i % 2 === 0);
      results.push({ label: r.label, ...res });
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
await stopProcess(server.child);
agent.destroy();

const ms = results.map((r) => r.ms).sort((a, b) => a - b);
const byStatus = new Map<number, number>();
for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
const errors = results.filter((r) => r.status >= 500);
const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 5);
console.log(
  `hostile: ${results.length} requests from ${pool.length} kinds, ${clients} clients, ${seconds.toFixed(1)} s (${(results.length / seconds).toFixed(0)} req/s)`,
);
console.log(
  `latency ms: p50 ${percentile(ms, 50).toFixed(1)}  p99 ${percentile(ms, 99).toFixed(1)}  max ${ms.at(-1)!.toFixed(1)}  (target max <= 2000: ${ms.at(-1)! <= 2000 ? 'met' : 'NOT met'})`,
);
console.log(
  `statuses: ${[...byStatus]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}×${n}`)
    .join('  ')}  (target no 5xx: ${errors.length === 0 ? 'met' : 'NOT met'})`,
);
console.log(`slowest: ${slowest.map((r) => `${r.label} ${r.ms.toFixed(0)} ms (${r.status})`).join('; ')}`);
for (const e of errors.slice(0, 10)) console.log(`  5xx: ${e.label} ${e.status}`);
if (!opts.keep) fs.rmSync(dataDir, { recursive: true, force: true });
