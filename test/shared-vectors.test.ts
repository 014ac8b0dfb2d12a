import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb, type Db } from '../server/store/db.ts';
import { Store } from '../server/store/index.ts';
import { COLD_MS, pack, unpack, SharedVectorBudget, WorkerSharedVectors } from '../server/search/shared-vectors.ts';
import { rng } from './helpers/rng.ts';
import { Int8Nearest } from '../lib/vector/int8-l2.ts';
import type { VectorChunk } from '../server/store/vector-chunks.ts';

/**
 * Two connections sharing one vector cache (as the retrieval workers do through the pool): a
 * complete version is read out of SQLite once, and a version that changed (re-embedded, deleted,
 * replaced by a new version under the same id) is never scanned from the shared copy.
 */

const DIMS = 16;

function vector(r: () => number): Float32Array {
  return Float32Array.from({ length: DIMS }, () => r() - 0.5);
}

/** A served version of n snippets with vectors, marked complete unless `complete` is false. */
async function makeVersion(store: Store, db: Db, r: () => number, n: number, complete = true): Promise<number> {
  const now = new Date().toISOString();
  db.prepare("INSERT OR IGNORE INTO libraries (id, title, source_type, created_at, updated_at) VALUES ('/t/lib', 't', 'bundle', ?, ?)").run(now, now);
  const versionId = await store.libraries.createVersion('/t/lib', `v${Math.floor(r() * 1e9)}`, null, now);
  const ins = db.prepare("INSERT INTO snippets (version_id, kind, source_id, tokens, content_hash, position) VALUES (?, 'info', ?, 1, 'h', ?)");
  const ids = db.transaction(() => Array.from({ length: n }, (_, i) => Number(ins.run(versionId, `u${i}`, i).lastInsertRowid)))();
  await store.vectors.upsertBatch(ids.map((id) => ({ id, versionId, vector: vector(r) })));
  db.prepare("UPDATE library_versions SET state = 'ready' WHERE id = ?").run(versionId);
  if (complete) assert.ok(await store.vectors.markComplete(versionId));
  return versionId;
}

test('two connections share a complete version once and never scan a changed one from the shared copy', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-shared-vec-'));
  const file = path.join(dir, 'stacks.db');
  const db = openDb(file);
  const readers: Store[] = [];
  try {
    // The writer has no cache: its KNN always reads SQLite, the reference answer.
    const writer = new Store(db);
    await writer.vectors.ensure('e1', DIMS);
    const r = rng(11);
    const complete = await makeVersion(writer, db, r, 1500);
    const incomplete = await makeVersion(writer, db, r, 700, false);
    const shared = new WorkerSharedVectors(new Map(), 1 << 30);
    for (let i = 0; i < 2; i++) readers.push(new Store(openDb(file, { readonly: true }), { vectorCacheBytes: 1 << 20, sharedVectors: shared }));
    const [a, b] = readers as [Store, Store];
    const query = vector(r);
    const ids = (s: Store, v: number) => s.search.knn(v, query, 8).map((h) => h.id);

    const expected = ids(writer, complete);
    assert.equal(expected.length, 8);
    assert.deepEqual(ids(a, complete), expected);
    assert.deepEqual(ids(b, complete), expected);
    assert.equal(shared.loads, 1, 'the second connection scanned the copy the first one loaded');
    assert.ok(shared.heldBytes > 1500 * DIMS);

    // Not complete: each connection's own cache, emptied on commits, as before.
    assert.deepEqual(ids(b, incomplete), ids(writer, incomplete));
    assert.equal(shared.loads, 1, 'an incomplete version is not shared');

    // Re-embedded for another embedder: the table is recreated and filled again in the same order,
    // so the version has the same id, marker and first chunk id; only the schema cookie differs.
    await writer.vectors.ensure('e2', DIMS);
    await writer.vectors.ensure('e1', DIMS);
    const snippetIds = db.prepare('SELECT id FROM snippets WHERE version_id = ? ORDER BY id').pluck().all(complete) as number[];
    await writer.vectors.upsertBatch(snippetIds.map((id) => ({ id, versionId: complete, vector: vector(r) })));
    assert.ok(await writer.vectors.markComplete(complete));
    const reembedded = ids(writer, complete);
    assert.notDeepEqual(reembedded, expected);
    assert.deepEqual(ids(b, complete), reembedded, 'a re-embedded version was scanned from the shared copy');
    assert.deepEqual(ids(a, complete), reembedded);
    assert.equal(shared.loads, 2);

    // Deleted (its marker is cleared before any row goes), then a new version under the same id.
    const last = await makeVersion(writer, db, r, 1500);
    const before = ids(writer, last);
    assert.deepEqual(ids(a, last), before);
    assert.equal(shared.loads, 3);
    await writer.libraries.deleteVersion(last, 100);
    assert.deepEqual(ids(b, last), [], 'a deleted version was scanned from the shared copy');
    const replaced = await makeVersion(writer, db, r, 1500);
    assert.equal(replaced, last, 'the new version reuses the id (the case the key must tell apart)');
    const fresh = ids(writer, replaced);
    assert.notDeepEqual(fresh, before);
    assert.deepEqual(ids(b, replaced), fresh, 'a replaced version was scanned from the shared copy');
    assert.deepEqual(ids(a, replaced), fresh);
    assert.equal(shared.loads, 4);
  } finally {
    for (const s of readers) s.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('packed chunks round-trip, and the shared budget keeps the most recently scanned within its bytes', () => {
  const chunk = (n: number, fill: number) => ({
    size: n,
    validity: Buffer.alloc(Math.ceil(n / 8), 0xff),
    rowids: Buffer.alloc(n * 8, fill),
    vectors: Buffer.alloc(n * DIMS, fill),
  });
  const chunks = [chunk(16, 1), chunk(9, 2)];
  const packed = pack('k', chunks, 2);
  assert.ok((packed.memory.buffer as unknown) instanceof SharedArrayBuffer, 'a shared WebAssembly memory');
  const copy = ({ inPlace: _, ...c }: VectorChunk) => ({
    ...c,
    validity: Buffer.from(c.validity),
    rowids: Buffer.from(c.rowids),
    vectors: Buffer.from(c.vectors),
  });
  assert.deepEqual(unpack(packed, 0).map(copy), chunks);
  assert.deepEqual(unpack(packed, 1).map(copy), chunks);
  // Each worker scans in a working area of its own, before the chunks; a thread the memory has no area for copies the vectors.
  const areas = [0, 1].map((w) => unpack(packed, w)[0]!.inPlace!.scratch);
  assert.deepEqual(areas, [0, packed.scratch]);
  assert.ok(unpack(packed, 0)[0]!.validity.byteOffset >= 2 * packed.scratch);
  assert.equal(unpack(packed, 2)[0]!.inPlace, undefined);

  const bytes = (packed.memory.buffer as unknown as SharedArrayBuffer).byteLength;
  const budget = new SharedVectorBudget(bytes * 2);
  const workers = [0, 1];
  const loaded = (key: string) => ({ touched: [], loaded: [{ key, bytes }] });
  const said = (out: ReturnType<SharedVectorBudget['report']>) => out.map((m) => [m.to, m.control.send ?? null, m.control.drop ?? null]);
  // Worker 0 loads k1: it sends its copy to worker 1.
  assert.deepEqual(said(budget.report(0, workers, loaded('k1'))), [[0, { key: 'k1', to: [1] }, null]]);
  // Worker 1 had loaded k1 at the same time: worker 0 sends it the kept copy.
  assert.deepEqual(said(budget.report(1, workers, loaded('k1'))), [[0, { key: 'k1', to: [1] }, null]]);
  budget.report(1, workers, loaded('k2'));
  assert.equal(budget.heldBytes, bytes * 2);
  // k1 scanned since: k2 leaves both workers when k3 comes.
  budget.report(0, workers, { touched: ['k1'], loaded: [] });
  assert.deepEqual(said(budget.report(0, workers, loaded('k3'))), [
    [0, null, ['k2']],
    [1, null, ['k2']],
    [0, { key: 'k3', to: [1] }, null],
  ]);
  assert.equal(budget.heldBytes, bytes * 2);
  // Larger than the whole budget: its loader lets it go.
  assert.deepEqual(said(budget.report(1, workers, { touched: [], loaded: [{ key: 'big', bytes: bytes * 3 }] })), [[1, null, ['big']]]);

  // A full worker cache takes a new version only in place of one not scanned for COLD_MS, and stays within the budget.
  const w = new WorkerSharedVectors(new Map(), bytes * 2);
  for (const key of ['a', 'b']) w.put(key, chunks);
  assert.ok(w.get('a'));
  assert.deepEqual(w.put('c', chunks), chunks, 'scanned from what was read');
  assert.equal(w.get('c'), undefined, 'everything held is in use: c is not kept');
  const now = Date.now;
  try {
    Date.now = () => now() + COLD_MS;
    w.put('c', chunks);
  } finally {
    Date.now = now;
  }
  assert.equal(w.heldBytes, bytes * 2);
  assert.equal(w.get('b'), undefined, 'the least recently scanned left');
  assert.ok(w.get('a') && w.get('c'));
});

test('vectors packed for two workers are scanned in place, each in its own working area, finding what a copy finds', () => {
  const r = rng(5);
  const dims = 385;
  const int8 = (n: number) => Buffer.from(Int8Array.from({ length: n }, () => Math.round((r() - 0.5) * 254)).buffer);
  const chunks: VectorChunk[] = [1024, 300, 1].map((size) => ({
    size,
    validity: Buffer.from(Uint8Array.from({ length: Math.ceil(size / 8) }, () => Math.floor(r() * 256))),
    rowids: Buffer.alloc(size * 8),
    vectors: int8(size * dims),
  }));
  const packed = pack('k', chunks, 2);
  const views = [unpack(packed, 0), unpack(packed, 1)];
  for (let i = 0; i < 5; i++) {
    const q = new Int8Array(int8(dims).buffer);
    const copied = new Int8Nearest(q, 50);
    for (const c of chunks) copied.add(c.vectors, c.size, c.validity);
    // Both workers' scans interleaved block by block, as two threads may run them.
    const scans = views.map(() => new Int8Nearest(q, 50));
    for (let b = 0; b < chunks.length; b++) views.forEach((v, w) => scans[w]!.add(v[b]!.vectors, v[b]!.size, v[b]!.validity, v[b]!.inPlace ?? null));
    for (const s of scans) assert.deepEqual(s.best(), copied.best());
  }
  // The working areas left the vectors as they were.
  assert.deepEqual(
    views[1]!.map((c) => Buffer.from(c.vectors)),
    chunks.map((c) => c.vectors),
  );
});
