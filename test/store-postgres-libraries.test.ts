// The libraries-and-sources stores on both backends: each story is told to SQLite's store (behind
// asAsync) and to its PostgreSQL twin on a fresh database, the answers must be the same, and the
// story's key answers the expected ones. Then what only PostgreSQL has to show: a version swap is
// atomic for readers on other connections and serialized between nodes, several workers share one
// crawl frontier, and the bulk insert's rate.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LibraryMeta } from '../lib/model.ts';
import { constraintViolation } from '../server/store/constraint.ts';
import { CrawlStore } from '../server/store/crawl.ts';
import { openDb } from '../server/store/db.ts';
import { DeclaredStore } from '../server/store/declared.ts';
import { GitStore } from '../server/store/git.ts';
import { LibraryStore } from '../server/store/libraries.ts';
import { PgCrawlStore } from '../server/store/pg/crawl.ts';
import { PgDeclaredStore } from '../server/store/pg/declared.ts';
import { PgGitStore } from '../server/store/pg/git.ts';
import { PgLibraryStore } from '../server/store/pg/libraries.ts';
import { migratePg } from '../server/store/pg/migrate.ts';
import { openPgPool, type PgPool } from '../server/store/pg/pool.ts';
import type { SameShape } from '../server/store/pg/same-shape.ts';
import { PgSearchModelStore } from '../server/store/pg/search-models.ts';
import { PgSnippetStore } from '../server/store/pg/snippets.ts';
import { SearchModelStore } from '../server/store/search-models.ts';
import { SnippetStore, type SnippetRow } from '../server/store/snippets.ts';
import { asAsync, startPostgres, type TestPostgres } from './helpers/postgres.ts';

const T0 = '2026-11-28T10:00:00.000Z';
const T1 = '2026-11-28T10:00:05.000Z';
const T2 = '2026-11-28T10:00:09.000Z';

/** The stores of one backend, and plain SQL for the rows of other stores a story needs (teamspaces, jobs, term index). */
interface Backend {
  libraries: SameShape<LibraryStore>;
  snippets: SameShape<SnippetStore>;
  crawl: SameShape<CrawlStore>;
  git: SameShape<GitStore>;
  declared: SameShape<DeclaredStore>;
  models: SameShape<SearchModelStore>;
  sql(text: string): Promise<void>;
  count(table: string): Promise<number>;
  /** A blob literal in the backend's SQL. */
  blob(hex: string): string;
}

function sqliteBackend(): Backend {
  const db = openDb(':memory:');
  return {
    libraries: asAsync(new LibraryStore(db)),
    snippets: asAsync(new SnippetStore(db)),
    crawl: asAsync(new CrawlStore(db)),
    git: asAsync(new GitStore(db)),
    declared: asAsync(new DeclaredStore(db)),
    models: asAsync(new SearchModelStore(db)),
    sql: async (text) => void db.exec(text),
    count: async (table) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n,
    blob: (hex) => `X'${hex}'`,
  };
}

function pgBackend(pool: PgPool): Backend {
  return {
    libraries: new PgLibraryStore(pool),
    snippets: new PgSnippetStore(pool),
    crawl: new PgCrawlStore(pool),
    git: new PgGitStore(pool),
    declared: new PgDeclaredStore(pool),
    models: new PgSearchModelStore(pool),
    sql: async (text) => void (await pool.query(text)),
    count: async (table) => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n,
    blob: (hex) => `'\\x${hex}'::bytea`,
  };
}

/** What a call answered, or which constraint (else which message) it failed on: the same on both backends. */
async function outcome<T>(f: () => Promise<T>): Promise<{ ok: T } | { error: string }> {
  try {
    return { ok: await f() };
  } catch (err) {
    return { error: constraintViolation(err) ?? (err as Error).message };
  }
}

const lib = (id: string, extra: Partial<LibraryMeta> = {}): LibraryMeta => ({ id, title: id.slice(1), description: 'd', sourceType: 'website', ...extra });

// Byte order puts '-' < '/' < 'B' < '_' < 'a'; a database collation (the stories' databases use ICU's en-US) would not.
const IDS = ['/b/x', '/a/B', '/a/a', '/a_b/c', '/a-b/c'];

async function librariesMetaStory(b: Backend): Promise<unknown[]> {
  const L = b.libraries;
  const seen: unknown[] = [];
  await b.sql(`INSERT INTO teamspaces (name, created_at) VALUES ('default', '${T0}'), ('second', '${T0}')`);
  for (const id of IDS) await L.upsert(lib(id), T0);
  // an existing library: owner taken when it had none, visibility kept; then stars kept (coalesce) and verified kept (max)
  await L.upsert(lib('/a/a', { sourceType: 'repo', stars: 5, verified: true, trustScore: 7.5, teamspaceId: 2, visibility: 'teamspace' }), T1);
  await L.upsert(lib('/a/a', { title: 'A', verified: false, branch: 'main' }), T1);
  seen.push(
    await L.get('/a/a'),
    (await L.list()).map((l) => l.id),
    await L.get('/nope'),
  );
  seen.push(await L.setMeta('/a/B', { title: 'Big' }), await L.setMeta('/nope', {}));
  seen.push(await L.setTrust('/a/B', {}), await L.setTrust('/nope', {}), await L.setTrust('/nope', { stars: 1 }));
  seen.push(await L.setTrust('/a/B', { stars: null, trustScore: 3, verified: true, license: 'MIT' }));
  seen.push(await L.setAccess('/b/x', 'teamspace', [2, 2, 1]), await L.setAccess('/nope', 'instance', []));
  // a grant to no teamspace, and a visibility no check allows: refused whole, nothing changed
  seen.push(await outcome(() => L.setAccess('/a/B', 'teamspace', [2, 99])), await outcome(() => L.setAccess('/a/B', 'bogus' as 'instance', [])));
  seen.push(await L.get('/b/x'), await L.get('/a/B'));
  return seen;
}

/** Versions of /a/a and the rest; returns what it saw and the ids it made. */
async function librariesVersionStory(b: Backend): Promise<{ seen: unknown[]; v: Record<string, number> }> {
  const L = b.libraries;
  const seen: unknown[] = [];
  for (const id of IDS) await L.upsert(lib(id), T0);
  const v = {
    v1: await L.createVersion('/a/a', '', 11, T0),
    v2: await L.createVersion('/a/a', '', 12, T1),
    src: await L.createVersion('/a/a', '', 12, T1, 'source'),
    other: await L.createVersion('/b/x', 'v2', null, T0),
  };
  seen.push(await L.buildingVersionForJob(12), await L.buildingVersionForJob(12, 'source'), await L.buildingVersionForJob(99));
  seen.push(await L.swapIn(v.v1, null, { tokens: 10, snippets: 2 }, T1));
  seen.push(await L.swapIn(v.v2, lib('/a/a', { title: 'A2' }), { tokens: 20, snippets: 3 }, T2, { versionId: v.src, tokens: 5, snippets: 1 }));
  seen.push(
    await outcome(() => L.swapIn(v.v1, null, { tokens: 0, snippets: 0 }, T2)),
    await outcome(() => L.swapIn(999, null, { tokens: 0, snippets: 0 }, T2)),
  );
  await L.swapIn(v.other, null, { tokens: 1, snippets: 1 }, T2);
  seen.push(await L.currentVersion('/a/a', ''), await L.currentVersion('/a/a', 'v9'), await L.versions('/a/a'), await L.version(v.v1), await L.version(999));
  seen.push(await L.allCurrentVersions(), await L.dynamicPartition(v.src), await L.dynamicPartition(v.v2), await L.get('/a/a'));
  for (const id of ['/b/x', '/a/B']) await L.markVersion(await L.createVersion(id, '', null, T2), 'failed', T2);
  seen.push(await L.purgeableVersions(), await L.searchUnindexedVersions());
  await L.markSearchIndexed(v.v2);
  seen.push(await L.searchUnindexedVersions());
  // last: a failed INSERT uses up an identity value on PostgreSQL, not a rowid on SQLite (later ids would differ)
  seen.push(await outcome(() => L.createVersion('/nope', '', null, T0)));
  return { seen, v };
}

const snippet = (i: number, over: Partial<SnippetRow> = {}): SnippetRow => ({
  kind: i % 3 === 0 ? 'code' : 'info',
  sourceId: `https://docs.example/${['b', 'a', 'c'][i % 3]}`,
  title: `title ${i}`,
  description: i % 3 === 0 ? `does ${i}` : '',
  language: i % 3 === 0 ? 'ts' : '',
  pageTitle: 'Page',
  breadcrumb: 'Guide > Part',
  content: i % 3 === 0 ? '' : `prose number ${i} with some words`,
  codeList: i % 3 === 0 ? [{ language: 'ts', code: `run(${i})` }] : null,
  tokens: 10 + i,
  contentHash: `h${i}`,
  position: i,
  isDynamic: i === 4,
  sourceFile: i % 2 ? `docs/${i}.md` : null,
  fts: { title: `title ${i}`, breadcrumb: '', description: '', code: '', content: '' },
  vector: i === 5 ? null : Float32Array.from({ length: 8 }, (_, k) => (i + 1) * 0.1 + k),
  ...over,
});

/** Deleting a version (with its source partition) and a library: the rows left, table by table. */
async function librariesDeleteStory(b: Backend, v: Record<string, number>): Promise<unknown[]> {
  const seen: unknown[] = [];
  for (const id of [v.v1, v.v2, v.src])
    await b.snippets.insertBatch(
      id,
      [0, 1, 2].map((i) => snippet(i)),
      null,
    );
  const term = (id: number) => `INSERT INTO term_chunks (version_id, base_id, last_id, docs, tokens, lengths) VALUES (${id}, 1, 2, 2, 9, ${b.blob('0102')});
    INSERT INTO term_postings (version_id, term, base_id, df, data) VALUES (${id}, 'word', 1, 1, ${b.blob('00')});`;
  await b.sql([v.v1, v.v2, v.src].map(term).join('\n'));
  await b.models.put(v.v2, 1, '{}', T1);
  const tables = ['snippets', 'term_chunks', 'term_postings', 'library_versions', 'search_models', 'libraries', 'library_grants'];
  const counts = async () => Promise.all(tables.map((t) => b.count(t)));
  seen.push(await counts());
  await b.libraries.deleteVersion(v.v2, 2); // two snippets a statement; takes its source partition and its model along
  seen.push(await counts(), await b.libraries.version(v.src));
  seen.push(await b.libraries.delete('/a/a'), await b.libraries.delete('/nope'), await counts());
  return seen;
}

describe('libraries and sources stores on SQLite and PostgreSQL', () => {
  let server: TestPostgres;
  let admin: PgPool;
  const pools: PgPool[] = [];
  let databases = 0;
  /** A fresh, migrated database whose collation is not byte order (ICU en-US): ORDER BY must say COLLATE "C" to match SQLite. */
  const freshPool = async (): Promise<PgPool> => {
    const name = `story_${++databases}`;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`);
    const pool = openPgPool(server.url.replace(/\/stacks$/, `/${name}`), { max: 4 });
    pools.push(pool);
    await migratePg(pool);
    return pool;
  };
  const both = async <T>(story: (b: Backend) => Promise<T>): Promise<{ sqlite: T; pg: T }> => {
    const sqlite = await story(sqliteBackend());
    const pg = await story(pgBackend(await freshPool()));
    return { sqlite, pg };
  };

  before(async () => {
    server = await startPostgres('debian');
    admin = openPgPool(server.url, { max: 1 });
  });
  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await admin?.end();
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
});
