// The write side and the probes of search on PostgreSQL. Stories told to SQLite's stores (behind
// asAsync) and to their twins, where the answers must be equal: the term index (the bytes BM25 reads)
// and the vectors (the 8-bit bytes, with and without pgvector). The FTS5-to-tsquery translation on
// its own. And the library probes on the fixture corpus, where the scores cannot be equal (bm25 vs
// ts_rank): the same version must come first for most of a fixed set of questions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { analyzeQuery } from '../server/search/query.ts';
import { indexTokens } from '../server/search/text.ts';
import { openDb } from '../server/store/db.ts';
import { LibraryStore } from '../server/store/libraries.ts';
import { ftsTokens, parseFtsMatch, toTsquery, tsvectorText } from '../server/store/pg/fts.ts';
import { PgLibraryStore } from '../server/store/pg/libraries.ts';
import type { PgPool } from '../server/store/pg/pool.ts';
import type { SameShape } from '../server/store/pg/same-shape.ts';
import { PgSearchProbeStore } from '../server/store/pg/search-probe.ts';
import { PgSnippetStore } from '../server/store/pg/snippets.ts';
import { PgTermStore } from '../server/store/pg/terms.ts';
import { PgVectorStore } from '../server/store/pg/vectors.ts';
import { SearchProbeStore } from '../server/store/search-probe.ts';
import { SnippetStore } from '../server/store/snippets.ts';
import { TermStore, type TermChunk } from '../server/store/terms.ts';
import { VectorStore } from '../server/store/vectors.ts';
import { asAsync, startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { corpusRows, probeMatch, QUESTIONS } from './helpers/probe-corpus.ts';
import { lib, snippet, T0 } from './helpers/source-stories.ts';

let debian: TestPostgres;
let withVector: TestPostgres;
before(async () => {
  [debian, withVector] = await Promise.all([startPostgres('debian'), startPostgres('pgvector')]);
});

after(async () => {
  await Promise.all([debian?.close(), withVector?.close()]);
});

/** A new migrated database on a server. */
async function database(server: TestPostgres, name: string): Promise<PgPool> {
  return (await server.migratedDatabase(name)).pool;
}

test('the FTS5 syntax the callers build becomes tsquery text whose lexemes are FTS5 tokens; nothing reaches tsquery syntax', () => {
  // What query.ts and select.ts build: quoted forms joined by OR.
  assert.deepEqual(toTsquery('"plugin" OR "plugins" OR "register"'), {
    query: "('plugin' | 'plugins' | 'register')",
    phrases: [
      { query: "'plugin'", term: 'plugin' },
      { query: "'plugins'", term: 'plugins' },
      { query: "'register'", term: 'register' },
    ],
  });
  // A quoted string of several tokens is a phrase; "" is a quote; case and diacritics fold as unicode61's.
  assert.equal(toTsquery('"vite.config.ts" OR "Café"')?.query, "(('vite' <-> 'config' <-> 'ts') | 'cafe')");
  assert.equal(toTsquery('"say ""hi"""')?.query, "('say' <-> 'hi')");
  // Barewords, implicit AND, NOT, parentheses, prefix, `+`.
  assert.equal(toTsquery('a b NOT c')?.query, "('a' & ('b' & !'c'))");
  assert.equal(toTsquery('(a OR b) AND "c d"*')?.query, "(('a' | 'b') & ('c' <-> 'd':*))");
  assert.equal(toTsquery('"a" + "b"')?.query, "('a' <-> 'b')");
  // tsquery's and SQL's syntax in user text is only ever separators between lexemes.
  for (const evil of ["x' | 'y", 'a:* & !b', "'); DROP TABLE snippets; --", 'a <-> b', '\\', "o'brien"]) {
    const q = toTsquery(`"${evil.replace(/"/g, '""')}"`);
    const lexemes = ftsTokens(evil);
    assert.equal(q?.query ?? null, lexemes.length === 0 ? null : lexemes.length === 1 ? `'${lexemes[0]}'` : `(${lexemes.map((l) => `'${l}'`).join(' <-> ')})`);
  }
  // A phrase without a token matches nothing: dropped from an OR, empties an AND.
  assert.equal(toTsquery('"..." OR "x"')?.query, "'x'");
  assert.equal(toTsquery('"..." AND "x"'), null);
  // What no caller writes is refused rather than guessed.
  assert.throws(() => parseFtsMatch('title: x'), /column filters/);
  assert.throws(() => parseFtsMatch('{title}: x'), /does not take/);
  assert.throws(() => parseFtsMatch('"x'), /not closed/);
  // The tokenizer is the term index's (server/search/text.ts), itself FTS5's unicode61.
  for (const s of ['Hello, World!', 'naïve façade Ærø', 'foo_bar-baz 1.2.3', 'straße ΣΊΣΥΦΟΣ 東京', '']) assert.deepEqual(ftsTokens(s), indexTokens(s));
  // The tsvector: weights by column, a gap between columns, positions repeated.
  assert.equal(
    tsvectorText({ title: 'Route hooks', breadcrumb: '', description: 'a hook', code: 'hook()', content: '' }),
    "'route':2A 'hooks':3A 'a':5C 'hook':6C,8",
  );
});

/** The term index story: two chunks, every read, the delete. */
async function termStory(T: SameShape<TermStore>, L: SameShape<LibraryStore>): Promise<unknown[]> {
  const seen: unknown[] = [];
  await L.upsert(lib('/t/t'), T0);
  const v = await L.createVersion('/t/t', '', null, T0);
  const chunk = (baseId: number, terms: [string, number[]][]): TermChunk => ({
    baseId,
    lastId: baseId + 3,
    docs: 3,
    tokens: 31,
    lengths: Uint16Array.from([0, 10, 12, 9]),
    norms: Float32Array.from([0, 1.5, 2.25, 1]),
    postings: new Map(terms.map(([t, data]) => [t, { df: data.length / 2, data: Uint16Array.from(data) }])),
  });
  seen.push(await T.indexedThrough(v));
  await T.writeChunk(
    v,
    chunk(0, [
      ['alpha', [1, 10, 3, 20]],
      ['alps', [2, 10]],
      ['b', [1, 30]],
      ['beta', [3, 10]],
      ['été', [2, 10]],
    ]),
  );
  await T.writeChunk(
    v,
    chunk(65536, [
      ['alpha', [2, 10]],
      ['az', [1, 10]],
      ['gamma', [3, 65535]],
    ]),
  );
  await T.writeChunk(v, chunk(131072, []));
  seen.push(
    await T.indexedThrough(v),
    await T.chunks(v),
    await T.firstHeld([v], [['zeta', 'gamma', 'alpha'], ['zeta'], []]),
    await T.firstHeld([999], [['alpha']]),
    await T.firstHeld([999, v], [['zeta', 'alpha']]),
  );
  seen.push(await T.termsStartingWith(v, 'a', 2, 4), await T.termsStartingWith(v, 'b', 1, 1), await T.termsStartingWith(v, 'é', 1, 9));
  seen.push(await T.postings(v, 'alpha'), await T.postings(v, 'gamma'), await T.postings(v, 'none'));
  seen.push(await T.versionKey(v), await T.versionKey(999));
  await T.deleteVersion(v);
  seen.push(await T.indexedThrough(v), await T.chunks(v), await T.postings(v, 'alpha'));
  return seen;
}

test('the term index: the same answers and bytes on both backends', async () => {
  const db = openDb(':memory:');
  const pool = await database(debian, 'terms');
  const sqlite = await termStory(asAsync(new TermStore(db)), asAsync(new LibraryStore(db)));
  const pg = await termStory(new PgTermStore(pool), new PgLibraryStore(pool));
  assert.deepEqual(pg, sqlite);
  assert.equal(sqlite[0], 0);
  assert.equal(sqlite[1], 131075);
  assert.deepEqual(
    sqlite[6],
    new Map([
      ['alps', 1],
      ['az', 1],
    ]),
  );
});

interface VectorBackend {
  V: SameShape<VectorStore>;
  S: SameShape<SnippetStore>;
  L: SameShape<LibraryStore>;
  sql(text: string): Promise<void>;
  /** The stored 8-bit vectors by snippet id. */
  bytes(): Promise<[number, string][]>;
}

/** The vector story: a first embedder, a build with vectors, the re-embed job's reads and writes, completeness, a second embedder. */
async function vectorStory(b: VectorBackend): Promise<unknown[]> {
  const { V, S, L } = b;
  const seen: unknown[] = [await V.filledBy(), await V.ensure('e1', 8), await V.filledBy(), await V.ensure('e1', 8)];
  await L.upsert(lib('/v/v'), T0);
  const v = await L.createVersion('/v/v', '', null, T0);
  const ids = await S.insertBatch(
    v,
    [0, 1, 2, 3, 4, 5, 6].map((i) => snippet(i)),
    V.table,
  );
  seen.push(ids, await V.missingCount(), await V.missing(0, 10), await b.bytes());
  seen.push(await V.markComplete(v), await V.versionCounts());
  await b.sql(`UPDATE library_versions SET state = 'ready' WHERE id = ${v}`);
  seen.push(await V.markComplete(v), await V.markAllComplete());
  const vec = (k: number) => Float32Array.from({ length: 8 }, (_, j) => Math.sin(k + j) * (j + 1));
  seen.push(
    await V.upsertBatch([
      { id: ids[5]!, versionId: v, vector: vec(1) },
      { id: 999, versionId: v, vector: vec(2) },
      { id: ids[0]!, versionId: v, vector: vec(3) },
    ]),
  );
  seen.push(await V.missingCount(), await V.missing(0, 10), await b.bytes(), await S.withEmbeddings([ids[5]!, ids[0]!]));
  seen.push(await V.markComplete(v), await V.markAllComplete(), await V.versionCounts());
  seen.push(await V.ensure('e2', 8), await V.filledBy(), await V.missingCount(), await b.bytes(), await V.versionCounts(), await S.withEmbeddings([ids[5]!]));
  return seen;
}

function sqliteVectors(): VectorBackend {
  const db = openDb(':memory:');
  return {
    V: asAsync(new VectorStore(db)),
    S: asAsync(new SnippetStore(db)),
    L: asAsync(new LibraryStore(db)),
    sql: async (text) => void db.exec(text),
    bytes: async () =>
      (db.prepare('SELECT rowid AS id, embedding FROM snippet_vec ORDER BY rowid').all() as { id: number; embedding: Buffer }[]).map((r) => [
        r.id,
        r.embedding.toString('hex'),
      ]),
  };
}

function pgVectors(pool: PgPool): VectorBackend & { V: PgVectorStore } {
  return {
    V: new PgVectorStore(pool),
    S: new PgSnippetStore(pool),
    L: new PgLibraryStore(pool),
    sql: async (text) => void (await pool.query(text)),
    bytes: async () =>
      (await pool.query<{ id: number; embedding: Buffer }>('SELECT snippet_id AS id, embedding FROM snippet_vec ORDER BY snippet_id')).rows.map((r) => [
        r.id,
        r.embedding.toString('hex'),
      ]),
  };
}

test('vectors: the same answers and 8-bit bytes as sqlite-vec, on a server without pgvector (bytes only) and with it (plus an HNSW column)', async () => {
  const sqlite = await vectorStory(sqliteVectors());
  assert.deepEqual(sqlite.slice(0, 4), [null, false, 'e1:8:int8', false]);
  for (const [server, name] of [
    [debian, 'vectors'],
    [withVector, 'vectors'],
  ] as const) {
    const pool = await database(server, name);
    const b = pgVectors(pool);
    assert.deepEqual(await vectorStory(b), sqlite, server.flavor);
    assert.equal(await b.V.knnDims(), server.flavor === 'pgvector' ? 8 : null);
  }
});

test('pgvector: the halfvec column holds the int8 values, its HNSW index answers L2 neighbours, and a later ensure fills a missing column', async () => {
  const pool = await database(withVector, 'knn');
  const b = pgVectors(pool);
  await b.V.ensure('e1', 16);
  await b.L.upsert(lib('/k/k'), T0);
  const v = await b.L.createVersion('/k/k', '', null, T0);
  const vec = (k: number) => Float32Array.from({ length: 16 }, (_, j) => Math.sin(k * 1.7 + j * 0.3) + (j === k % 16 ? 2 : 0));
  const ids = await b.S.insertBatch(
    v,
    Array.from({ length: 40 }, (_, i) => snippet(i, { vector: vec(i), contentHash: `k${i}` })),
    b.V.table,
  );
  const check = async () => {
    const { rows } = await pool.query<{ id: number; embedding: Buffer; knn: string }>(
      'SELECT snippet_id AS id, embedding, knn::text AS knn FROM snippet_vec ORDER BY snippet_id',
    );
    assert.equal(rows.length, 40);
    for (const r of rows) assert.deepEqual(JSON.parse(r.knn), [...new Int8Array(r.embedding.buffer, r.embedding.byteOffset, r.embedding.length)]);
    // Nearest neighbours by the index agree with brute force over the bytes.
    const q = rows[7]!;
    const ints = (e: Buffer) => new Int8Array(e.buffer, e.byteOffset, e.length);
    const l2 = (a: Int8Array, c: Int8Array) => Math.sqrt(a.reduce((t, x, j) => t + (x - c[j]!) ** 2, 0));
    const brute = rows.map((r) => ({ id: r.id, d: l2(ints(r.embedding), ints(q.embedding)) })).sort((x, y) => x.d - y.d || x.id - y.id);
    await pool.query('SET enable_seqscan = off');
    const { rows: knn } = await pool.query<{ id: number; d: number }>(
      `SELECT snippet_id AS id, knn <-> $1::halfvec AS d FROM snippet_vec WHERE version_id = $2 ORDER BY knn <-> $1::halfvec LIMIT 5`,
      [q.knn, v],
    );
    await pool.query('RESET enable_seqscan');
    assert.deepEqual(
      knn.map((r) => r.id),
      brute.slice(0, 5).map((r) => r.id),
    );
    for (const [k, r] of knn.entries()) assert.ok(Math.abs(r.d - brute[k]!.d) < 1e-3);
  };
  await check();
  assert.equal(ids.length, 40);
  // The re-embed job's upsert replaces the bytes; the trigger follows.
  assert.equal(await b.V.upsertBatch([{ id: ids[3]!, versionId: v, vector: vec(30) }]), 1);
  await check();
  // A database whose vectors were stored without the column (pgvector installed afterwards): the same embedder's ensure adds and fills it.
  await pool.query('DROP TRIGGER snippet_vec_knn ON snippet_vec; ALTER TABLE snippet_vec DROP COLUMN knn');
  assert.equal(await b.V.knnDims(), null);
  assert.equal(await b.V.ensure('e1', 16), false);
  assert.equal(await b.V.knnDims(), 16);
  await check();
});

/** What the index rows follow: a source partition's rows stay out of the full-text index, rewriteFts replaces a row's words, a deleted version takes its rows' words and vectors. */
async function indexRowsStory(b: VectorBackend, P: SameShape<SearchProbeStore>): Promise<unknown[]> {
  const { V, S, L } = b;
  const cols = (title: string, content = '') => ({ title, breadcrumb: 'Guide', description: '', code: '', content });
  // Not `v1`: SQLite's vocabulary also counts the scope column's token v<version id>, which PostgreSQL has no need of.
  const words = ['alpha', 'beta', 'delta', 'gamma', 'guide', 'nope', 'Alpha', 'al pha'];
  await V.ensure('e', 8);
  for (const id of ['/i/a', '/i/b']) await L.upsert(lib(id), T0);
  const va = await L.createVersion('/i/a', '', null, T0);
  const vb = await L.createVersion('/i/b', '', null, T0);
  const ids = await S.insertBatch(va, [snippet(0, { fts: cols('Alpha beta', 'gamma gamma') }), snippet(1, { fts: cols('alpha') })], V.table);
  await S.insertBatch(vb, [snippet(2, { fts: cols('alpha delta') })], V.table, { fts: false });
  const seen: unknown[] = [await P.documentFrequencies(words)];
  await S.rewriteFts(va, [{ id: ids[1]!, fts: cols('delta') }]);
  const top = await P.topVersions('"alpha" OR "delta"', 10, 3);
  seen.push(
    await P.documentFrequencies(words),
    top.map((t) => [t.versionId, t.hits]),
    (await P.versionScore(vb, '"alpha"', 5)).hits,
  );
  await L.deleteVersion(va);
  seen.push(await P.documentFrequencies(words), await V.missingCount(), (await b.bytes()).length, await P.topVersions('"alpha"', 10, 3));
  return seen;
}

test('index rows: source partitions, rewrites and deletes change the full-text and vector rows alike on both backends', async () => {
  const db = openDb(':memory:');
  const sqliteB: VectorBackend = { ...sqliteVectors(), V: asAsync(new VectorStore(db)), S: asAsync(new SnippetStore(db)), L: asAsync(new LibraryStore(db)) };
  sqliteB.bytes = async () =>
    (db.prepare('SELECT rowid AS id, embedding FROM snippet_vec ORDER BY rowid').all() as { id: number; embedding: Buffer }[]).map((r) => [
      r.id,
      r.embedding.toString('hex'),
    ]);
  const sqlite = await indexRowsStory(sqliteB, asAsync(new SearchProbeStore(db)));
  const pool = await database(debian, 'index_rows');
  assert.deepEqual(await indexRowsStory(pgVectors(pool), new PgSearchProbeStore(pool)), sqlite);
  assert.deepEqual(
    sqlite[0],
    new Map([
      ['alpha', 2],
      ['beta', 1],
      ['gamma', 1],
      ['guide', 2],
    ]),
  );
  // After the rewrite: version 1's two rows match (alpha, delta); version 2, a source partition, is not indexed.
  assert.deepEqual(sqlite[2], [[1, 2]]);
  // Version 2's row keeps its vector; nothing of version 1 is left.
  assert.deepEqual(sqlite.slice(4), [new Map(), 0, 1, []]);
});

test('probes on the fixture corpus: exact document counts, and the same version first for most questions', async () => {
  const db = openDb(':memory:');
  const pool = await database(debian, 'probes');
  const sqlite = { L: new LibraryStore(db), S: new SnippetStore(db), P: new SearchProbeStore(db) };
  const pg = { L: new PgLibraryStore(pool), S: new PgSnippetStore(pool), P: new PgSearchProbeStore(pool) };
  const names = new Map<number, string>();
  const started = Date.now();
  for (const [k, { project, rows }] of corpusRows().entries()) {
    const id = `/corpus/${k}`;
    await sqlite.L.upsert(lib(id), T0);
    await pg.L.upsert(lib(id), T0);
    const v = await sqlite.L.createVersion(id, '', null, T0);
    assert.equal(await pg.L.createVersion(id, '', null, T0), v);
    await sqlite.S.insertBatch(v, rows, null);
    await pg.S.insertBatch(v, rows, null);
    names.set(v, project);
  }
  const loadMs = Date.now() - started;
  // What autovacuum does after a bulk load: statistics for the planner, and the GIN pending list merged into the index.
  await pool.query('VACUUM ANALYZE snippets');

  let sameTop = 0;
  let sameLibrary = 0;
  let sameTie = 0;
  let probed = 0;
  const misses: string[] = [];
  const probeStart = Date.now();
  const timing = { topS: 0, topP: 0, tieS: 0, tieP: 0 };
  for (const question of QUESTIONS) {
    const a = analyzeQuery(question);
    const terms = [...new Set(a.terms.filter((t) => /^[a-z0-9]+$/.test(t) && !/^\d+$/.test(t)))].slice(0, 48);
    const df = sqlite.P.documentFrequencies(terms);
    // Exact: the same counts (the scope column's `v<id>` tokens, which only SQLite's vocabulary counts, are no question words here).
    assert.deepEqual(await pg.P.documentFrequencies(terms), df, question);
    const match = probeMatch(question, df);
    if (!match) continue;
    probed++;
    let t1 = Date.now();
    const s = sqlite.P.topVersions(match, 200, 3);
    timing.topS += Date.now() - t1;
    t1 = Date.now();
    const p = await pg.P.topVersions(match, 200, 3);
    timing.topP += Date.now() - t1;
    const library = (v: number | undefined) => names.get(v ?? 0)?.replace(/-v[\d.]+$/, '');
    if (library(s[0]?.versionId) === library(p[0]?.versionId)) sameLibrary++;
    if (s[0]?.versionId === p[0]?.versionId) sameTop++;
    else misses.push(`${question}: sqlite ${names.get(s[0]?.versionId ?? 0)}, pg ${names.get(p[0]?.versionId ?? 0)}`);
    // The tie-break (select.ts breakTies): each candidate version's best 5 rows for the question's
    // match; the candidates are the first four versions of SQLite's probe (the close contenders).
    const candidates = s.slice(0, 4).map((x) => x.versionId);
    const best = async (score: (v: number) => Promise<number>) => {
      const scored = await Promise.all(candidates.map(async (v) => [v, await score(v)] as const));
      return scored.sort((x, y) => y[1] - x[1])[0]![0];
    };
    let t0 = Date.now();
    const tieS = await best(async (v) => sqlite.P.versionScore(v, a.match, 5).score);
    timing.tieS += Date.now() - t0;
    t0 = Date.now();
    const tieP = await best(async (v) => (await pg.P.versionScore(v, a.match, 5)).score);
    timing.tieP += Date.now() - t0;
    if (tieS === tieP) sameTie++;
  }
  const probeMs = Date.now() - probeStart;
  console.log(
    `probes: ${sameTop}/${probed} questions with the same top version of topVersions (${sameLibrary} the same library), ${sameTie}/${probed} with the same best versionScore; ` +
      `load ${loadMs} ms, probes ${probeMs} ms ${JSON.stringify(timing)}\n  ${misses.join('\n  ')}`,
  );
  assert.ok(probed >= 30);
  assert.ok(sameTop >= 0.8 * probed, `${sameTop}/${probed}`);
  assert.ok(sameTie >= 0.7 * probed, `${sameTie}/${probed}`);
});
