import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Int8Nearest } from '../lib/vector/int8-l2.ts';
import { openDb } from '../server/store/db.ts';
import { Store } from '../server/store/index.ts';
import { VectorChunkCache, type VectorChunk } from '../server/store/vector-chunks.ts';
import { rng } from './helpers/rng.ts';

/**
 * The KNN of server/store/search.ts scans sqlite-vec's chunks with the WebAssembly kernel of
 * lib/vector/int8-l2.wat instead of asking vec0. It must find what vec0 finds, skip deleted
 * slots, and the committed .wasm must be the compiled .wat.
 */

function randomInt8(r: () => number, n: number): Int8Array {
  return Int8Array.from({ length: n }, () => Math.round((r() - 0.5) * 254));
}

test('the committed WebAssembly kernel is its .wat source compiled', () => {
  const run = spawnSync(process.execPath, ['scripts/build-wasm.mjs', '--check'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});

test('Int8Nearest finds the k smallest squared L2 distances, block by block, skipping invalid slots', () => {
  const r = rng(7);
  for (const dims of [1, 7, 16, 17, 100, 385]) {
    for (const k of [1, 10, 500]) {
      const q = randomInt8(r, dims);
      const blocks = [37, 64, 1].map((n) => ({
        n,
        vectors: randomInt8(r, n * dims),
        validity: Uint8Array.from({ length: Math.ceil(n / 8) }, () => Math.floor(r() * 256)),
      }));
      const nearest = new Int8Nearest(q, k);
      const all: { block: number; slot: number; l2sq: number }[] = [];
      blocks.forEach((b, block) => {
        nearest.add(new Uint8Array(b.vectors.buffer), b.n, b.validity);
        for (let slot = 0; slot < b.n; slot++) {
          if (!(b.validity[slot >> 3]! & (1 << (slot & 7)))) continue;
          let s = 0;
          for (let d = 0; d < dims; d++) s += (q[d]! - b.vectors[slot * dims + d]!) ** 2;
          all.push({ block, slot, l2sq: s });
        }
      });
      // Stable sort: ties keep arrival order, as Int8Nearest does.
      const expected = all.sort((a, b) => a.l2sq - b.l2sq).slice(0, k);
      assert.deepEqual(nearest.best(), expected, `dims=${dims} k=${k}`);
    }
  }
});

test('SearchStore.knn over the chunks finds what vec0 finds, without deleted rows', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-vscan-'));
  const db = openDb(path.join(dir, 'stacks.db'));
  try {
    const store = new Store(db);
    const dims = 100;
    await store.vectors.ensure('test', dims);
    const r = rng(11);
    const ins = db.prepare('INSERT INTO snippet_vec (rowid, version_id, embedding) VALUES (?, ?, vec_int8(?))');
    db.transaction(() => {
      // 2,600 rows in version 1 (three chunks), 300 in version 2; ids interleaved.
      for (let id = 1; id <= 2900; id++) {
        const v = new Int8Array(dims);
        for (let d = 0; d < dims; d++) v[d] = Math.round((r() - 0.5) * 60);
        ins.run(BigInt(id), BigInt(id % 10 === 0 ? 2 : 1), Buffer.from(v.buffer));
      }
    })();
    const del = db.prepare('DELETE FROM snippet_vec WHERE rowid = ?');
    for (let id = 3; id <= 2900; id += 7) del.run(BigInt(id));
    const vecKnn = db.prepare('SELECT rowid AS id, distance FROM snippet_vec WHERE embedding MATCH vec_int8(?) AND k = ? AND version_id = ?');
    for (let i = 0; i < 20; i++) {
      const query = Float32Array.from({ length: dims }, () => r() - 0.5);
      for (const [version, k] of [
        [1, 30],
        [2, 10],
        [1, 3000],
      ] as const) {
        const got = store.search.knn(version, query, k);
        const q8 = new Int8Array(dims);
        // The same 8-bit query the store makes (quantize.ts).
        const scale = 180 / Math.hypot(...query);
        for (let d = 0; d < dims; d++) q8[d] = Math.max(-127, Math.min(127, Math.round(query[d]! * scale)));
        const want = vecKnn.all(Buffer.from(q8.buffer), k, BigInt(version)) as { id: number; distance: number }[];
        assert.equal(got.length, want.length);
        assert.deepEqual(store.search.scan(version, Buffer.from(q8.buffer), k), got, 'the chunk scan answered, not vec0');
        assert.ok(
          got.every((h) => (h.id - 3) % 7 !== 0),
          'a deleted row was returned',
        );
        got.forEach((h, j) => assert.ok(Math.abs(h.distance - want[j]!.distance) < 1e-3, `distance at rank ${j}`));
        // Equal distances may come in another order; the rows found are the same apart from the last tie.
        const last = want[want.length - 1]!.distance;
        const strict = (hs: { id: number; distance: number }[]) =>
          hs
            .filter((h) => h.distance < last - 1e-3)
            .map((h) => h.id)
            .sort((a, b) => a - b);
        assert.deepEqual(strict(got), strict(want));
      }
    }
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('VectorChunkCache keeps recently used versions within its budget and forgets everything when the stamp changes', () => {
  const chunk = (bytes: number): VectorChunk => ({ size: 1, validity: Buffer.alloc(0), rowids: Buffer.alloc(0), vectors: Buffer.alloc(bytes) });
  const cache = new VectorChunkCache(300);
  let loads = 0;
  const load = (bytes: number) => () => (loads++, [chunk(bytes)]);
  cache.get(1, 's1', load(100));
  cache.get(2, 's1', load(100));
  cache.get(1, 's1', load(100)); // a hit, and 1 becomes the most recent
  assert.equal(loads, 2);
  cache.get(3, 's1', load(150)); // 2 (least recent) leaves to make room
  assert.equal(cache.heldBytes, 250);
  cache.get(1, 's1', load(100));
  assert.equal(loads, 3, 'version 1 stayed');
  cache.get(2, 's1', load(100)); // 3 is now the least recent and leaves
  assert.equal(loads, 4, 'version 2 had left');
  assert.equal(cache.heldBytes, 200);
  cache.get(4, 's1', load(400)); // larger than the budget: served, not kept
  assert.equal(cache.heldBytes, 200);
  cache.get(5, 's1', () => null); // unreadable: not kept
  cache.get(1, 's2', load(100)); // a commit: everything is read again
  assert.equal(loads, 6);
  assert.equal(cache.heldBytes, 100);
  const off = new VectorChunkCache(0);
  off.get(1, 's1', load(10));
  off.get(1, 's1', load(10));
  assert.equal(loads, 8, 'a budget of 0 keeps nothing');
});

test('SearchStore.knn with its vector cache sees rows deleted by this connection and by another one', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-vcache-'));
  const file = path.join(dir, 'stacks.db');
  const db = openDb(file);
  try {
    const writer = new Store(db, { vectorCacheBytes: 1 << 20 });
    const dims = 16;
    await writer.vectors.ensure('test', dims);
    const r = rng(5);
    const ins = db.prepare('INSERT INTO snippet_vec (rowid, version_id, embedding) VALUES (?, 1, vec_int8(?))');
    db.transaction(() => {
      for (let id = 1; id <= 500; id++) ins.run(BigInt(id), Buffer.from(randomInt8(r, dims).buffer));
    })();
    const reader = new Store(openDb(file, { readonly: true }), { vectorCacheBytes: 1 << 20 });
    try {
      const query = Float32Array.from({ length: dims }, () => r() - 0.5);
      const ids = (s: Store) => s.search.knn(1, query, 5).map((h) => h.id);
      const first = ids(writer);
      assert.deepEqual(ids(reader), first);
      // This connection deletes the nearest: its own cache must not answer with it.
      db.prepare('DELETE FROM snippet_vec WHERE rowid = ?').run(BigInt(first[0]!));
      assert.ok(!ids(writer).includes(first[0]!), 'the writer served a deleted row from its cache');
      // The other connection's cache must not either.
      assert.ok(!ids(reader).includes(first[0]!), 'the reader served a deleted row from its cache');
      assert.deepEqual(ids(reader), ids(writer));
    } finally {
      reader.close();
    }
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
