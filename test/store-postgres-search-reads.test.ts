// The read side of retrieval on PostgreSQL (PgSearchStore) against SQLite's SearchStore on the same
// rows: pages, sections, vector readiness and nearest neighbours, on a server without pgvector (the
// node's int8 scan: the same neighbours and distances as SQLite's) and with it (HNSW: approximate, so
// recall against SQLite's exact list, and k rows even for a version holding a small share of the
// index). The per-node vector cache, and the read snapshot.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDb } from '../server/store/db.ts';
import { LibraryStore } from '../server/store/libraries.ts';
import { PgLibraryStore } from '../server/store/pg/libraries.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import type { SameShape } from '../server/store/pg/same-shape.ts';
import { PgSearchStore } from '../server/store/pg/search.ts';
import { PgSnippetStore } from '../server/store/pg/snippets.ts';
import { PgVectorStore } from '../server/store/pg/vectors.ts';
import { SearchStore, type VectorHit } from '../server/store/search.ts';
import { SnippetStore } from '../server/store/snippets.ts';
import { VectorStore } from '../server/store/vectors.ts';
import { asAsync, startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { rng } from './helpers/rng.ts';
import { lib, snippet, T0 } from './helpers/source-stories.ts';

let debian: TestPostgres;
let withVector: TestPostgres;
const pools: PgPool[] = [];

before(async () => {
  [debian, withVector] = await Promise.all([startPostgres('debian'), startPostgres('pgvector')]);
});

after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await Promise.all([debian?.close(), withVector?.close()]);
});

/** A new migrated database on a server, and a pool to it. */
async function database(server: TestPostgres, name: string): Promise<PgPool & { url: string }> {
  const { pool, url } = await server.migratedDatabase(name);
  return Object.assign(pool, { url });
}

/** Another pool to the same database (new connections, which take the database's settings). */
function poolTo(url: string, max = 4): PgPool {
  const pool = openPgPool(url, { max });
  pools.push(pool);
  return pool;
}

interface Backend {
  L: SameShape<LibraryStore>;
  S: SameShape<SnippetStore>;
  V: SameShape<VectorStore>;
  R: SameShape<SearchStore>;
}

const DIMS = 32;
/** Libraries and their sizes: the last holds a small share of the index (a filtered HNSW scan must still find k of its rows). */
const SIZES = [900, 700, 800, 60];

/** A vector drawn around one of a few directions, so that neighbours are not a uniform cloud. */
function vectorOf(draw: () => number, centres: Float32Array[]): Float32Array {
  const c = centres[Math.floor(draw() * centres.length)]!;
  return Float32Array.from(c, (x) => x + (draw() - 0.5) * 0.9);
}

function centresOf(draw: () => number): Float32Array[] {
  return Array.from({ length: 6 }, () => Float32Array.from({ length: DIMS }, () => draw() * 2 - 1));
}

/** Snippets spread over pages with anchors, code and prose, repeats of a section (`#s~2`). */
function rowsOf(n: number, draw: () => number, centres: Float32Array[], seed: string) {
  return Array.from({ length: n }, (_, i) =>
    snippet(i, {
      sourceId: `https://docs.example/p${i % 7}${i % 3 === 2 ? '' : `#s${i % 5}${i % 11 === 0 ? '~2' : ''}`}`,
      contentHash: `${seed}-${i}`,
      vector: vectorOf(draw, centres),
    }),
  );
}

/** The same libraries, rows and vectors on a backend; their version ids. */
async function load(b: Backend): Promise<number[]> {
  const draw = rng(7);
  const centres = centresOf(draw);
  await b.V.ensure('e1', DIMS);
  const versions: number[] = [];
  for (const [k, n] of SIZES.entries()) {
    const id = `/r/lib${k}`;
    await b.L.upsert(lib(id), T0);
    const v = await b.L.createVersion(id, '', null, T0);
    await b.S.insertBatch(v, rowsOf(n, draw, centres, id), b.V.table);
    await b.L.swapIn(v, null, { tokens: 1, snippets: n }, T0);
    versions.push(v);
  }
  // One version left incomplete: no vectors are searched in it.
  for (const v of versions.slice(0, -1)) await b.V.markComplete(v);
  return versions;
}

/** Queries near the data and far from it. */
function queries(): Float32Array[] {
  const draw = rng(99);
  const centres = centresOf(rng(7));
  return [
    ...Array.from({ length: 12 }, () => vectorOf(draw, centres)),
    ...Array.from({ length: 4 }, () => Float32Array.from({ length: DIMS }, () => draw() - 0.5)),
  ];
}

/** Everything but the neighbours: pages, sections, readiness. */
async function pageStory(R: SameShape<SearchStore>, versions: number[]): Promise<unknown[]> {
  const seen: unknown[] = [];
  for (const v of [...versions, 999]) {
    seen.push(await R.vectorsReady(v));
    for (const p of ['https://docs.example/p1', 'https://docs.example/p3', 'https://docs.example/none']) seen.push(await R.page(v, p), await R.page(v, p, 3));
    for (const s of ['https://docs.example/p0#s0', 'https://docs.example/p1#s1', 'https://docs.example/p2#s2', 'https://docs.example/p4#s9']) {
      seen.push(await R.sectionCode(v, s));
    }
  }
  return seen;
}

async function neighbours(R: SameShape<SearchStore>, versions: number[], k: number): Promise<VectorHit[][]> {
  const out: VectorHit[][] = [];
  for (const v of versions) for (const q of queries()) out.push(await R.knn(v, q, k));
  return out;
}

function sqliteBackend(): Backend & { search: SearchStore } {
  const db = openDb(':memory:');
  const search = new SearchStore(db);
  return { L: asAsync(new LibraryStore(db)), S: asAsync(new SnippetStore(db)), V: asAsync(new VectorStore(db)), R: asAsync(search), search };
}

function pgBackend(pool: PgPool, vectorCacheBytes = 0): Backend & { R: PgSearchStore } {
  return { L: new PgLibraryStore(pool), S: new PgSnippetStore(pool), V: new PgVectorStore(pool), R: new PgSearchStore(pool, { vectorCacheBytes }) };
}

test('without pgvector: the same pages, sections, readiness and nearest neighbours (ids and distances) as SQLite', async () => {
  const sqlite = sqliteBackend();
  const versions = await load(sqlite);
  const pool = await database(debian, 'reads');
  const pg = pgBackend(pool, 64 << 20);
  assert.deepEqual(await load(pg), versions);
  assert.equal(await new PgVectorStore(pool).knnDims(), null);

  const pages = await pageStory(sqlite.R, versions);
  assert.deepEqual(await pageStory(pg.R, versions), pages);
  // The story reads something: pages in page order, a section's code, its repeat.
  assert.ok(pages.some((p) => Array.isArray(p) && p.length > 3));
  assert.ok(pages.some((p) => typeof p === 'number'));

  for (const k of [1, 10, 40]) assert.deepEqual(await neighbours(pg.R, versions, k), await neighbours(sqlite.R, versions, k), `k=${k}`);
  // sqlite-vec's own KNN on the version without the completion marker agrees too (knn does not look at the marker).
  const small = versions.at(-1)!;
  assert.equal((await pg.R.knn(small, queries()[0]!, 100)).length, SIZES.at(-1));
  // A query of another dimension finds nothing on either side.
  const wrong = Float32Array.from({ length: DIMS + 1 }, () => 1);
  assert.deepEqual(await pg.R.knn(versions[0]!, wrong, 5), []);
});

test('without pgvector: the node keeps a complete version`s vectors until a re-embed or a version swap changes them', async () => {
  const sqlite = sqliteBackend();
  const versions = await load(sqlite);
  const pool = await database(debian, 'cache');
  const pg = pgBackend(pool, 64 << 20);
  await load(pg);
  const q = queries()[3]!;
  const v = versions[0]!;
  await pg.R.knn(v, q, 10);
  await pg.R.knn(v, q, 20);
  assert.equal(pg.R.loads, 1, 'read once, then from the cache');
  assert.ok(pg.R.cachedBytes >= SIZES[0]! * DIMS);
  // The incomplete version is read each time (its vectors may still change).
  const incomplete = versions.at(-1)!;
  await pg.R.knn(incomplete, q, 10);
  await pg.R.knn(incomplete, q, 10);
  assert.equal(pg.R.loads, 3);

  // A new embedder: the table is emptied, the re-embed job writes other vectors, the version is complete again.
  const draw = rng(3);
  const centres = centresOf(draw);
  for (const b of [sqlite, pg]) {
    await b.V.ensure('e2', DIMS);
    const ids = (await b.S.list(v, 10_000)).map((s) => s.id);
    const d2 = rng(5);
    await b.V.upsertBatch(ids.map((id) => ({ id, versionId: v, vector: vectorOf(d2, centres) })));
    await b.V.markComplete(v);
  }
  const after = await pg.R.knn(v, q, 10);
  assert.equal(pg.R.loads, 4, 'the re-embedded vectors are read again');
  assert.deepEqual(after, await sqlite.R.knn(v, q, 10));

  // A new version of the library swapped in: a new id, read once.
  const rows = rowsOf(50, rng(11), centres, 'swap');
  const swapped: number[] = [];
  for (const b of [sqlite, pg]) {
    const nv = await b.L.createVersion('/r/lib0', '', null, T0);
    await b.S.insertBatch(nv, rows, b.V.table);
    for (const old of await b.L.swapIn(nv, null, { tokens: 1, snippets: rows.length }, T0)) await b.L.deleteVersion(old);
    await b.V.markComplete(nv);
    swapped.push(nv);
  }
  assert.equal(swapped[0], swapped[1]);
  assert.deepEqual(await pg.R.knn(swapped[1]!, q, 10), await sqlite.R.knn(swapped[0]!, q, 10));
  assert.equal(pg.R.loads, 5);
  assert.deepEqual(await pg.R.knn(v, q, 10), [], 'the retired version has no vectors left');
});

test('with pgvector: the HNSW index answers with high recall of SQLite`s exact neighbours, k rows even in a version with a small share of the index', async () => {
  const sqlite = sqliteBackend();
  const versions = await load(sqlite);
  const pool = await database(withVector, 'hnsw');
  const pg = pgBackend(pool);
  await load(pg);
  assert.equal(await new PgVectorStore(pool).knnDims(), DIMS);
  await pool.query('VACUUM ANALYZE snippet_vec');
  assert.deepEqual(await pageStory(pg.R, versions), await pageStory(sqlite.R, versions));

  const k = 40;
  // The HNSW index must be what answers: on a table this small the planner rightly prefers the exact
  // path (the version's rows by the version index, sorted), so this database loses that index and
  // sequential scans (new connections take the setting).
  await pool.query('DROP INDEX snippet_vec_version');
  await pool.query('ALTER DATABASE hnsw SET enable_seqscan = off');
  const fresh = poolTo(pool.url);
  const R = new PgSearchStore(fresh);
  const plan = await fresh.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN SELECT snippet_id FROM snippet_vec WHERE version_id = ${versions.at(-1)} ORDER BY knn <-> '[${Array(DIMS).fill(1).join(',')}]'::halfvec LIMIT ${k}`,
  );
  assert.match(plan.rows.map((r) => r['QUERY PLAN']).join('\n'), /snippet_vec_knn/);

  const exact = await neighbours(sqlite.R, versions, k);
  const approx = await neighbours(R, versions, k);
  let found = 0;
  let total = 0;
  approx.forEach((list, i) => {
    const want = exact[i]!;
    assert.equal(list.length, want.length, `query ${i}: as many rows as SQLite's`);
    const exactDistance = new Map(want.map((h) => [h.id, h.distance]));
    found += list.filter((h) => exactDistance.has(h.id)).length;
    total += want.length;
    // Nearest first, and each distance the exact 8-bit L2 of its row (the index approximates which rows, not their distances).
    for (let j = 1; j < list.length; j++) assert.ok(list[j - 1]!.distance <= list[j]!.distance);
    for (const h of list) if (exactDistance.has(h.id)) assert.ok(Math.abs(exactDistance.get(h.id)! - h.distance) < 1e-3, `${h.id}: ${h.distance}`);
  });
  const recall = found / total;
  console.log(`pgvector HNSW recall@${k} of the exact neighbours: ${recall.toFixed(3)} over ${approx.length} queries`);
  assert.ok(recall >= 0.9, `recall ${recall}`);
});

test('the read snapshot: statements inside it see the database as it was when it began, while another connection deletes a version', async () => {
  const pool = await database(debian, 'snapshot');
  const pg = pgBackend(pool, 0);
  const versions = await load(pg);
  const v = versions[0]!;
  const other = poolTo(pool.url, 1);
  const q = queries()[0]!;
  const page = 'https://docs.example/p1';
  const before = { page: await pg.R.page(v, page), knn: await pg.R.knn(v, q, 10) };
  assert.ok(before.page.length > 0 && before.knn.length === 10);
  const inside = await pg.R.snapshot(async () => {
    const first = await pg.R.page(v, page);
    await new PgLibraryStore(other).deleteVersion(v);
    return { first, again: await pg.R.page(v, page), knn: await pg.R.knn(v, q, 10), ready: await pg.R.vectorsReady(v) };
  });
  assert.deepEqual(inside, { first: before.page, again: before.page, knn: before.knn, ready: true });
  assert.deepEqual(await pg.R.page(v, page), []);
  assert.equal(await pg.R.vectorsReady(v), false);
  // A snapshot only reads.
  await assert.rejects(
    pg.R.snapshot(() => new PgLibraryStore(pool).deleteVersion(versions[1]!)),
    /read-only/,
  );
});
