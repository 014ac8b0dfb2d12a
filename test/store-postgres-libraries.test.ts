// The libraries-and-sources stores on both backends: each story (test/helpers/source-stories.ts) is
// told to SQLite's store (behind asAsync) and to its PostgreSQL twin on an emptied database, the
// answers must be the same, and the story's key answers the expected ones. Then what only PostgreSQL
// has to show: a version swap is atomic for readers on other connections and serialized between nodes
// (also against a delete), several workers share one crawl frontier, a NUL in text is kept as U+FFFD,
// and the bulk insert's rate.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PgCrawlStore } from '../server/store/pg/crawl.ts';
import { PgLibraryStore } from '../server/store/pg/libraries.ts';
import { migratePg } from '../server/store/pg/migrate.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import {
  crawlStory,
  declaredAndModelsStory,
  gitStory,
  librariesBuildStory,
  librariesDeleteStory,
  librariesMetaStory,
  librariesVersionStory,
  lib,
  outcome,
  pgBackend,
  snippet,
  snippetStory,
  sqliteBackend,
  T0,
  T1,
  T2,
  type Backend,
} from './helpers/source-stories.ts';

let server: TestPostgres;
/** The stories' database, emptied before each story; its collation is not byte order (ICU en-US). */
let stories: PgPool;
/** The file's database for what only PostgreSQL is tested for. */
let shared: PgPool;
const pools: PgPool[] = [];

/**
 * The stories' database as new: every table emptied and every identity back at 1, as SQLite's
 * in-memory database of the other half of the story (much faster than creating a database each time).
 * ORDER BY must say COLLATE "C" there to answer in SQLite's order.
 */
async function freshPool(): Promise<PgPool> {
  const { rows } = await stories.query<{ t: string }>(
    "SELECT string_agg(tablename, ', ') AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'",
  );
  await stories.query(`TRUNCATE ${rows[0].t} RESTART IDENTITY CASCADE`);
  return stories;
}

/** Another pool on the same database: another node. */
function nodePool(of: PgPool, max = 3): PgPool {
  const pool = openPgPool(String(of.options.connectionString), { max });
  pools.push(pool);
  return pool;
}

async function both<T>(story: (b: Backend) => Promise<T>): Promise<{ sqlite: T; pg: T }> {
  const sqlite = await story(sqliteBackend());
  const pg = await story(pgBackend(await freshPool()));
  return { sqlite, pg };
}

before(async () => {
  server = await startPostgres('debian');
  const admin = openPgPool(server.url, { max: 1 });
  await admin.query("CREATE DATABASE stories TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'");
  await admin.end();
  stories = openPgPool(server.url.replace(/\/stacks$/, '/stories'), { max: 4 });
  shared = openPgPool(server.url, { max: 4 });
  pools.push(stories, shared);
  await Promise.all([migratePg(stories), migratePg(shared)]);
});
after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await server?.close();
});

test('libraries: metadata, trust, access and grants', async () => {
  const { sqlite, pg } = await both(librariesMetaStory);
  assert.deepEqual(pg, sqlite);
  const [aa, list] = sqlite as [{ teamspaceId: number; visibility: string; stars: number; verified: boolean; title: string; branch: string }, string[]];
  assert.deepEqual([aa.title, aa.teamspaceId, aa.visibility, aa.stars, aa.verified, aa.branch], ['A', 2, 'instance', 5, true, 'main']);
  assert.deepEqual(list, ['/a-b/c', '/a/B', '/a/a', '/a_b/c', '/b/x']);
  assert.deepEqual(sqlite.slice(3, 13), [true, false, true, false, false, true, true, false, { error: 'foreign_key' }, { error: 'check' }]);
  const [bx, aB] = sqlite.slice(13) as { grants: number[]; visibility: string; teamspaceId: number | null; license: string | null }[];
  assert.deepEqual([bx.grants, bx.visibility, bx.teamspaceId], [[1, 2], 'teamspace', 1]);
  assert.deepEqual([aB.grants, aB.visibility, aB.teamspaceId, aB.license], [[], 'instance', null, 'MIT']);
});

test('libraries: versions built, swapped in, retired, failed; then deleted with their rows', async () => {
  const { sqlite, pg } = await both(async (b) => {
    const { seen, v } = await librariesVersionStory(b);
    return { seen, v, deleted: await librariesDeleteStory(b, v) };
  });
  assert.deepEqual(pg, sqlite);
  const { seen, v, deleted } = sqlite;
  assert.deepEqual(seen.at(-1), { error: 'foreign_key' });
  assert.deepEqual(seen.slice(3, 7), [[], [v.v1], { error: `version ${v.v1} is not being built` }, { error: 'version 999 is not being built' }]);
  const current = seen[7] as { id: number; isCurrent: boolean; dynamicVersionId: number; totalSnippets: number };
  assert.deepEqual([current.id, current.isCurrent, current.dynamicVersionId, current.totalSnippets], [v.v2, true, v.src, 3]);
  // purgeable in the order of SQLite's index (library, state, id): /a/B's failed 6, /a/a's retired v1, /b/x's failed 5
  assert.deepEqual(seen.slice(16, 19), [
    [6, v.v1, 5],
    [v.v2, v.src, v.other],
    [v.src, v.other],
  ]);
  assert.deepEqual(deleted, [[9, 3, 3, 6, 1, 5, 0], [3, 1, 1, 4, 0, 5, 0], null, true, false, [0, 0, 0, 3, 0, 4, 0]]);
});

test('libraries: a build begun with its library row, and a library without a documentation version deleted', async () => {
  const { sqlite, pg } = await both(librariesBuildStory);
  assert.deepEqual(pg, sqlite);
  const [ids, library, versions, partition] = sqlite as [number[], { title: string }, { id: number; state: string; jobId: number }[], { id: number }];
  assert.deepEqual(ids, [1, 2, 3]);
  assert.equal(library.title, 'New', 'the second build left the row as the first made it');
  assert.deepEqual(
    versions.map((v) => [v.id, v.state, v.jobId]),
    [
      [1, 'building', 7],
      [2, 'building', 8],
    ],
  );
  assert.equal(partition.id, 3);
  assert.deepEqual(sqlite.slice(4), [false, true, null, 0, 0, false, { error: 'check' }, null]);
});

test('snippets: a batch in, then the reads of search, learning, rebuilds and exports', async () => {
  const { sqlite, pg } = await both(snippetStory);
  assert.deepEqual(pg, sqlite);
  const at = (i: number) => sqlite[i] as { snippet: { id: number } }[];
  assert.deepEqual(sqlite.slice(0, 5), [{ tokens: 0, snippets: 0, maxPosition: -1 }, { code: 0, info: 0 }, [], [1, 2, 3, 4, 5, 6, 7], [8]]);
  assert.deepEqual(sqlite.slice(6, 9), [{ tokens: 108, snippets: 8, maxPosition: 7 }, { code: 3, info: 5 }, [1, 3, 6]]);
  assert.deepEqual(
    (sqlite[9] as [number, Float32Array][]).map(([id, e]) => [id, e.length]),
    [
      [1, 8],
      [3, 8],
    ],
    'snippet 6 has no vector',
  );
  assert.deepEqual(
    at(10).map((e) => e.snippet.id),
    [2, 5, 8, 3],
    'by source URL (a before c), then id',
  );
  assert.deepEqual(
    at(12).map((e) => e.snippet.id),
    [3, 4, 5],
  );
  assert.deepEqual(
    (sqlite[13] as { id: number }[]).map((x) => x.id),
    [4, 2],
  );
  assert.deepEqual(
    sqlite[16],
    [
      { id: 2, kind: 'info', text: 'Then NPM install it' },
      { id: 7, kind: 'code', text: 'yarn add x' },
    ],
    'NPM found as npm',
  );
  assert.deepEqual(sqlite.slice(-3), [{ error: 'check' }, { error: 'foreign_key' }, { tokens: 108, snippets: 8, maxPosition: 7 }]);
});

test('crawl: the frontier of one job, remembered pages, sites', async () => {
  const { sqlite, pg } = await both(crawlStory);
  assert.deepEqual(pg, sqlite);
  const entry = (i: number) => sqlite[i] as { urlKey: string } | null;
  assert.deepEqual(sqlite.slice(0, 7), [true, false, true, true, false, true, false], 'k4 refused: 3 pages, the skipped one not counted');
  assert.deepEqual(
    [7, 8, 9, 10].map((i) => entry(i)?.urlKey ?? null),
    ['k1', 'k3', 'k2', null],
    'shallowest first',
  );
  assert.deepEqual(sqlite.slice(11, 15), [null, 'https://s.example/k1', null, 0]);
  assert.deepEqual(sqlite[15], { queued: 0, processing: 0, done: 1, unchanged: 0, duplicate: 1, skipped: 2, failed: 1 });
  assert.deepEqual(sqlite[18], [{ url: 'https://s.example/k2', error: 'boom' }]);
  assert.deepEqual(sqlite.slice(20, 27), [null, 2, 1, 1, 0, 1, 5], 'pages pruned to those crawled; earlier finished frontiers of /s/a purged');
  assert.equal((sqlite[27] as { schedule: string }).schedule, '0 * * * *', 'a schedule left out is kept');
  assert.deepEqual(sqlite.slice(-4, -2), [true, false]);
  assert.deepEqual(sqlite.at(-1), { error: 'foreign_key' });
});

test("git: repository, a version's files, host credentials per owner", async () => {
  const { sqlite, pg } = await both(gitStory);
  assert.deepEqual(pg, sqlite);
  const repo = sqlite[0] as { branch: string; lastCommit: string; lastJobId: number };
  assert.deepEqual([repo.branch, repo.lastCommit, repo.lastJobId], ['dev', 'abc', 4], 'null keeps the last commit and job');
  assert.deepEqual(sqlite.slice(1, 3), [null, { error: 'foreign_key' }]);
  assert.deepEqual(
    sqlite[5],
    [
      ['a-b.md', '5'],
      ['a/B.md', '3'],
      ['a/a.md', '4'],
      ['b.md', '2'],
    ],
    'replaced whole, in byte order',
  );
  assert.deepEqual(sqlite.slice(7, 9), [[], { error: 'foreign_key' }]);
  const hosts = (i: number) => (sqlite[i] as { host: string; secretEnc: string }[]).map((h) => `${h.host}:${h.secretEnc}`);
  assert.deepEqual([hosts(9), hosts(10)], [['git.a:s2', 'git.b:s4'], ['git.b:s3']], "an owner's put leaves the other owner's row");
  assert.deepEqual(sqlite.slice(12), [null, true, false, [], { error: 'foreign_key' }]);
});

test('declared sources and ranking models', async () => {
  const { sqlite, pg } = await both(declaredAndModelsStory);
  assert.deepEqual(pg, sqlite);
  const first = sqlite[0] as { created: boolean; jobId: number; fingerprint: string };
  assert.deepEqual([first.created, first.jobId, first.fingerprint], [true, 3, 'g'], 'created kept from the first put, job id kept when none given');
  assert.deepEqual([(sqlite[2] as { libraryId: string }[]).map((r) => r.libraryId), (sqlite[3] as unknown[]).length], [['/d/B', '/d/b'], 1]);
  assert.deepEqual(sqlite.slice(4, 7), [[1, 2], null, null]);
  assert.deepEqual(sqlite.slice(7), [
    [2],
    { format: 2, builtAt: T1, model: '{"a":1}' },
    T1,
    [],
    { format: 2, builtAt: T2, model: '{"b":2}' },
    { error: 'foreign_key' },
  ]);
});

test('a version swap is atomic for readers on other connections: the old version or the new, never none or both', async () => {
  const pool = shared;
  const writer = new PgLibraryStore(pool);
  const reader = new PgLibraryStore(nodePool(pool, 2));
  await writer.upsert(lib('/w/w'), T0);
  const first = await writer.createVersion('/w/w', '', null, T0);
  await writer.swapIn(first, null, { tokens: 1, snippets: 1 }, T0);
  let swapping = true;
  const seen: (number | null)[] = [];
  let notOne = 0;
  const reading = (async () => {
    while (swapping) {
      const [current, all] = await Promise.all([reader.currentVersion('/w/w', ''), reader.allCurrentVersions()]);
      seen.push(current?.id ?? null);
      if (all.filter((v) => v.libraryId === '/w/w').length !== 1) notOne++;
    }
  })();
  for (let i = 0; i < 40; i++) {
    const v = await writer.createVersion('/w/w', '', null, T1);
    await writer.swapIn(v, null, { tokens: i, snippets: i }, T1);
  }
  swapping = false;
  await reading;
  assert.ok(seen.length > 40, `the reader read ${seen.length} times during 40 swaps`);
  assert.equal(seen.filter((id) => id === null).length, 0, 'never no current version');
  assert.equal(notOne, 0, 'never two current versions (nor none) in the list of served versions');
  assert.ok(
    seen.every((id, i) => i === 0 || (id ?? 0) >= (seen[i - 1] ?? 0)),
    'never an older version after a newer one',
  );
});

test('swaps of one library from two nodes at once run one after the other: each retires the version the other made current', async () => {
  const pool = shared;
  const nodes = [new PgLibraryStore(pool), new PgLibraryStore(nodePool(pool))];
  await nodes[0].upsert(lib('/w/two'), T0);
  const made: number[] = [];
  const retired: number[] = [];
  for (let round = 0; round < 10; round++) {
    const vs = [await nodes[0].createVersion('/w/two', '', null, T0), await nodes[1].createVersion('/w/two', '', null, T0)];
    made.push(...vs);
    const answers = await Promise.all(nodes.map((n, i) => n.swapIn(vs[i], null, { tokens: 1, snippets: 1 }, T1)));
    retired.push(...answers.flat());
  }
  const current = await nodes[0].currentVersion('/w/two', '');
  assert.ok(current && made.includes(current.id));
  assert.deepEqual(
    retired.sort((a, b) => a - b),
    made.filter((id) => id !== current.id).sort((a, b) => a - b),
    'every version but the last current was retired exactly once',
  );
  assert.deepEqual((await nodes[1].versions('/w/two')).map((v) => v.state).sort(), [...Array(made.length - 1).fill('retired'), 'ready'].sort());
});

test('crawl workers on four nodes share one frontier: maxPages held, each URL claimed once, one original per content', async () => {
  const pool = shared;
  await new PgLibraryStore(pool).upsert(lib('/c/c'), T0);
  const { rows } = await pool.query<{ id: number }>(
    `INSERT INTO jobs (kind, state, library_id, created_at, updated_at) VALUES ('crawl', 'running', '/c/c', '${T0}', '${T0}') RETURNING id`,
  );
  const job = rows[0].id;
  const nodes = [0, 1, 2, 3].map(() => new PgCrawlStore(nodePool(pool)));
  // every node finds the same 60 URLs and 30 of its own: 180 URLs for 100 pages
  const admitted = await Promise.all(
    nodes.map(async (crawl, n) => {
      const keys = [...Array.from({ length: 60 }, (_, i) => `u${i}`), ...Array.from({ length: 30 }, (_, i) => `n${n}-${i}`)];
      let yes = 0;
      await Promise.all(
        [0, 1, 2].map(async (lane) => {
          for (const k of keys.filter((_, i) => i % 3 === lane)) if (await crawl.admit(job, k, `https://c/${k}`, 1, 'link', 100, T0)) yes++;
        }),
      );
      return yes;
    }),
  );
  assert.equal(
    admitted.reduce((a, b) => a + b, 0),
    100,
    'admitted once each, up to maxPages',
  );
  assert.equal((await nodes[0].counts(job)).queued, 100);
  const claimed = await Promise.all(
    nodes.map(async (crawl) => {
      const mine: number[] = [];
      await Promise.all(
        [0, 1, 2].map(async () => {
          for (let e = await crawl.claim(job, T1); e; e = await crawl.claim(job, T1)) mine.push(e.id);
        }),
      );
      return mine;
    }),
  );
  const all = claimed.flat();
  assert.equal(new Set(all).size, 100, 'each URL claimed by one worker');
  assert.equal(all.length, 100);
  assert.ok(
    claimed.every((c) => c.length > 0),
    `every node worked: ${claimed.map((c) => c.length).join(', ')}`,
  );
  // eight pages with the same content finish at once on four nodes: one is the original
  const answers = await Promise.all(all.slice(0, 8).map((id, i) => nodes[i % 4].claimContentHash(id, job, 'same')));
  assert.equal(answers.filter((a) => a === null).length, 1, `one original: ${answers.join(', ')}`);
});

test("bulk insert: 10,000 snippets in batches of 2,000 keep their order (the rate is printed, beside SQLite's)", async (t) => {
  const content = 'Register a plugin with fastify.register and await its readiness before the server listens. '.repeat(6);
  const rows = Array.from({ length: 10_000 }, (_, i) =>
    snippet(i, { content, vector: Float32Array.from({ length: 384 }, (_, k) => Math.sin(i + k)), contentHash: `c${i}` }),
  );
  const rate = async (b: Backend): Promise<{ perSecond: number; ids: number[]; version: number }> => {
    await b.libraries.upsert(lib('/r/r'), T0);
    const version = await b.libraries.createVersion('/r/r', '', null, T0);
    const start = performance.now();
    const ids: number[] = [];
    for (let i = 0; i < rows.length; i += 2000) ids.push(...(await b.snippets.insertBatch(version, rows.slice(i, i + 2000), null)));
    return { perSecond: Math.round(rows.length / ((performance.now() - start) / 1000)), ids, version };
  };
  const sqlite = await rate(sqliteBackend());
  const pg = pgBackend(shared);
  const onPg = await rate(pg);
  t.diagnostic(`insert rate: PostgreSQL 15 ${onPg.perSecond} snippets/s, SQLite ${sqlite.perSecond} snippets/s (with its FTS5 rows), 384-dimension embeddings`);
  assert.deepEqual(
    onPg.ids,
    Array.from({ length: 10_000 }, (_, i) => onPg.ids[0] + i),
    'ids ascending in the order of the rows',
  );
  const stored = await pg.snippets.list(onPg.version, 10_000);
  assert.deepEqual(
    stored.map((s) => s.position),
    rows.map((r) => r.position),
  );
  const [back] = await pg.snippets.allWithEmbeddings(onPg.version).then((all) => all.slice(4321, 4322));
  assert.deepEqual(back.embedding, rows[4321].vector);
});

test('a library deleted on one node while another swaps in its version: one waits for the other, no deadlock', async () => {
  const nodes = [new PgLibraryStore(shared), new PgLibraryStore(nodePool(shared))];
  for (let round = 0; round < 25; round++) {
    await nodes[0].upsert(lib('/w/del'), T0);
    const v = await nodes[0].createVersion('/w/del', '', null, T0);
    const [swap, deleted] = await Promise.all([outcome(() => nodes[1].swapIn(v, null, { tokens: 1, snippets: 1 }, T1)), nodes[0].delete('/w/del')]);
    assert.ok('ok' in swap || swap.error === `version ${v} is not being built`, JSON.stringify(swap));
    assert.equal(deleted, true);
    assert.equal(await nodes[1].get('/w/del'), null);
  }
});

test('a NUL in a snippet, a library title or a page title is stored as U+FFFD: PostgreSQL text cannot hold it, and the write must not fail', async () => {
  const pg = pgBackend(shared);
  await pg.libraries.upsert(lib('/n/n', { title: 'N\u0000', description: 'a\u0000b' }), T0);
  const v = await pg.libraries.createVersion('/n/n', '', null, T0);
  const [id] = await pg.snippets.insertBatch(v, [snippet(1, { content: 'x\u0000y', title: '\u0000' })], null);
  const [s] = await pg.snippets.byIds([id]);
  assert.deepEqual([s.content, s.title], ['x\uFFFDy', '\uFFFD']);
  const l = await pg.libraries.get('/n/n');
  assert.deepEqual([l?.title, l?.description], ['N\uFFFD', 'a\uFFFDb']);
  await pg.crawl.savePage('/n/n', {
    url: 'u',
    etag: null,
    lastModified: null,
    contentHash: null,
    render: 'http',
    title: 't\u0000',
    links: [],
    snippetsJson: '[]',
    fetchedAt: T0,
  });
  assert.equal((await pg.crawl.page('/n/n', 'u'))?.title, 't\uFFFD');
});
