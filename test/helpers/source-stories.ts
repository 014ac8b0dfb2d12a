// Stories for test/store-postgres-libraries.test.ts: each is a sequence of calls to one backend's
// libraries-and-sources stores, returning what the calls answered, so that the test can tell the
// same story to SQLite and to PostgreSQL and compare. The expected key answers are asserted there.
import type { LibraryMeta } from '../../lib/model.ts';
import { constraintViolation } from '../../server/store/errors.ts';
import { CrawlStore } from '../../server/store/crawl.ts';
import { openDb } from '../../server/store/db.ts';
import { DeclaredStore } from '../../server/store/declared.ts';
import { GitStore } from '../../server/store/git.ts';
import { LibraryStore } from '../../server/store/libraries.ts';
import { PgCrawlStore } from '../../server/store/pg/crawl.ts';
import { PgDeclaredStore } from '../../server/store/pg/declared.ts';
import { PgGitStore } from '../../server/store/pg/git.ts';
import { PgLibraryStore } from '../../server/store/pg/libraries.ts';
import type { PgPool } from '../../server/store/pg/pool.ts';
import type { SameShape } from '../../server/store/pg/same-shape.ts';
import { PgSearchModelStore } from '../../server/store/pg/search-models.ts';
import { PgSnippetStore } from '../../server/store/pg/snippets.ts';
import { SearchModelStore } from '../../server/store/search-models.ts';
import { SnippetStore, type SnippetRow } from '../../server/store/snippets.ts';
import { asAsync } from './postgres.ts';

export const T0 = '2026-11-28T10:00:00.000Z';
export const T1 = '2026-11-28T10:00:05.000Z';
export const T2 = '2026-11-28T10:00:09.000Z';

/** The stores of one backend, and plain SQL for the rows of other stores a story needs (teamspaces, jobs, term index). */
export interface Backend {
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

export function sqliteBackend(): Backend {
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

export function pgBackend(pool: PgPool): Backend {
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
export async function outcome<T>(f: () => Promise<T>): Promise<{ ok: T } | { error: string }> {
  try {
    return { ok: await f() };
  } catch (err) {
    return { error: constraintViolation(err) ?? (err as Error).message };
  }
}

export const lib = (id: string, extra: Partial<LibraryMeta> = {}): LibraryMeta => ({
  id,
  title: id.slice(1),
  description: 'd',
  sourceType: 'website',
  ...extra,
});

/** Snippet i of a story: every third one code, the others prose; one without a vector, one dynamic. */
export const snippet = (i: number, over: Partial<SnippetRow> = {}): SnippetRow => ({
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

// Byte order puts '-' < '/' < 'B' < '_' < 'a'; a database collation (the stories' databases use ICU's en-US) would not.
const IDS = ['/b/x', '/a/B', '/a/a', '/a_b/c', '/a-b/c'];

export async function librariesMetaStory(b: Backend): Promise<unknown[]> {
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
export async function librariesVersionStory(b: Backend): Promise<{ seen: unknown[]; v: Record<string, number> }> {
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

/** Deleting a version (with its source partition) and a library: the rows left, table by table. */
export async function librariesDeleteStory(b: Backend, v: Record<string, number>): Promise<unknown[]> {
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

/**
 * A build begun (the library's row with the version, or the version alone when the library exists)
 * and a failed first build's library removed only while it has no documentation version.
 */
export async function librariesBuildStory(b: Backend): Promise<unknown[]> {
  const L = b.libraries;
  const seen: unknown[] = [];
  const first = await L.createBuild(lib('/n/new', { title: 'New' }), '', 7, T0);
  // the library exists now: its row is left as it is (the swap writes the build's metadata)
  const second = await L.createBuild(lib('/n/new', { title: 'Other' }), 'v2', 8, T1);
  const partition = await L.createBuild(lib('/n/new'), '', 7, T1, 'source');
  seen.push([first, second, partition], await L.get('/n/new'), await L.versions('/n/new'), await L.buildingVersionForJob(7, 'source'));
  seen.push(await L.deleteIfUnversioned('/n/new'));
  await L.deleteVersion(first);
  await L.deleteVersion(second);
  await b.snippets.insertBatch(partition, [snippet(0), snippet(1)], null);
  // a source partition alone does not keep the library: it goes with its rows
  seen.push(await L.deleteIfUnversioned('/n/new'), await L.get('/n/new'), await b.count('library_versions'), await b.count('snippets'));
  seen.push(await L.deleteIfUnversioned('/nope'));
  // last: a version the schema refuses leaves no library row behind (one transaction)
  seen.push(await outcome(() => L.createBuild(lib('/n/bad'), '', null, T0, 'bogus' as 'docs')), await L.get('/n/bad'));
  return seen;
}

/** Snippets of one version: the reads of search, learning, rebuilds and exports. */
export async function snippetStory(b: Backend): Promise<unknown[]> {
  const S = b.snippets;
  const seen: unknown[] = [];
  await b.libraries.upsert(lib('/s/s'), T0);
  const v = await b.libraries.createVersion('/s/s', '', null, T0);
  const empty = await b.libraries.createVersion('/s/s', 'v1', null, T0);
  seen.push(await S.totals(empty), await S.countByKind(empty), await S.insertBatch(v, [], null));
  const ids = await S.insertBatch(
    v,
    [0, 1, 2, 3, 4, 5, 6].map((i) =>
      snippet(i, i === 1 ? { content: 'Then NPM install it' } : i === 6 ? { codeList: [{ language: 'sh', code: 'yarn add x' }] } : {}),
    ),
    null,
  );
  seen.push(ids, await S.insertBatch(v, [snippet(7)], null, { fts: false }));
  await S.rewriteFts(v, [{ id: ids[0], fts: snippet(0).fts }]);
  seen.push([...(await S.hashes(v))].sort(), await S.totals(v), await S.countByKind(v));
  const w = await S.withEmbeddings([ids[5], ids[2], 999, ids[0]]);
  seen.push([...w.snippets.keys()], [...w.embeddings.entries()]);
  seen.push(await S.embeddedAt(v, ['https://docs.example/c', 'https://docs.example/a', 'https://docs.example/c']), await S.embeddedAt(v, []));
  seen.push(await S.embeddedPage(ids[1], 3), await S.byIds([ids[3], 999, ids[1]]), await S.byIds([]));
  seen.push(await S.headings(v, ids[0], 3), await S.installTexts(v, 0, 10), await S.installTexts(v, ids[1], 1));
  seen.push(await S.allWithEmbeddings(v), await S.list(v, 2, ids[2]), await S.list(v, 100));
  // last (a failed INSERT uses up identity values on PostgreSQL): a batch with one row no check allows,
  // and a batch for no version; nothing of either is stored
  seen.push(await outcome(() => S.insertBatch(v, [snippet(8), snippet(9, { kind: 'bogus' as 'code' })], null)));
  seen.push(await outcome(() => S.insertBatch(999, [snippet(8)], null)), await S.totals(v));
  return seen;
}

/** One crawl job's frontier, its remembered pages and its site. */
export async function crawlStory(b: Backend): Promise<unknown[]> {
  const C = b.crawl;
  const seen: unknown[] = [];
  for (const id of ['/s/b', '/s/a']) await b.libraries.upsert(lib(id), T0);
  await b.sql(`INSERT INTO jobs (kind, state, library_id, created_at, updated_at) VALUES ('crawl', 'succeeded', '/s/a', '${T0}', '${T0}'),
    ('crawl', 'running', '/s/a', '${T0}', '${T0}'), ('crawl', 'failed', '/s/b', '${T0}', '${T0}')`);
  const job = 2;
  const url = (k: string) => `https://s.example/${k}`;
  seen.push(await C.admit(job, 'k1', url('k1'), 0, 'start', 3, T0), await C.admit(job, 'k1', url('k1'), 0, 'link', 3, T0));
  await C.recordSkipped(job, 'robots', url('robots'), 1, 'robots.txt', T0);
  await C.recordSkipped(job, 'k1', url('k1'), 1, 'ignored: already there', T0);
  seen.push(await C.admit(job, 'k2', url('k2'), 2, 'link', 3, T0), await C.admit(job, 'k3', url('k3'), 1, 'sitemap', 3, T0));
  seen.push(await C.admit(job, 'k4', url('k4'), 1, 'link', 3, T0), await C.has(job, 'k1'), await C.has(job, 'k4'));
  const [e1, e3, e2] = [await C.claim(job, T1), await C.claim(job, T1), await C.claim(job, T1)];
  seen.push(e1, e3, e2, await C.claim(job, T1));
  if (!e1 || !e2 || !e3) throw new Error('three URLs were queued');
  seen.push(await C.claimContentHash(e1.id, job, 'same'), await C.claimContentHash(e3.id, job, 'same'), await C.claimContentHash(e2.id, job, 'other'));
  await C.finish(e1.id, 'done', { httpStatus: 200, render: 'http', snippets: 4 }, T1);
  await C.finish(e3.id, 'duplicate', {}, T1);
  await C.finish(e2.id, 'failed', { httpStatus: 500, error: 'boom' }, T2);
  await C.recordSkipped(job, 'k5', url('k5'), 1, 'noindex', T2);
  seen.push(await C.requeueProcessing(job, T2), await C.counts(job), await C.entries(job), await C.entries(job, 'failed'), await C.errors(job, 5));
  seen.push(...(await crawlPagesStory(b, job)));
  return seen;
}

async function crawlPagesStory(b: Backend, job: number): Promise<unknown[]> {
  const C = b.crawl;
  const seen: unknown[] = [];
  const page = (u: string, title: string) => ({
    url: u,
    etag: null,
    lastModified: 'yesterday',
    contentHash: 'h',
    render: 'http',
    title,
    links: ['https://s.example/k2'],
    snippetsJson: '[]',
    fetchedAt: T1,
  });
  await C.savePage('/s/a', page('k1', 'one'));
  await C.savePage('/s/a', page('k1', 'one again'));
  await C.savePage('/s/a', page('gone', 'gone'));
  seen.push(await C.page('/s/a', 'k1'), await C.page('/s/a', 'nope'), await C.pageCount('/s/a'));
  seen.push(await C.prunePages('/s/a', job), await C.pageCount('/s/a'));
  await C.admit(1, 'old', 'https://s.example/old', 0, 'start', 10, T0);
  await C.admit(3, 'b', 'https://s.example/b', 0, 'start', 10, T0);
  await C.purgeFinishedFrontiers('/s/a', job);
  seen.push((await C.entries(1)).length, (await C.entries(3)).length, (await C.entries(job)).length);
  await C.saveSite({ libraryId: '/s/b', startUrl: 'https://b/', options: { maxPages: 5 }, schedule: '0 * * * *', siteTitle: 'B' }, T0);
  await C.saveSite({ libraryId: '/s/b', startUrl: 'https://b/2', options: {}, lastJobId: 3, lastCrawledAt: T1 }, T1);
  await C.saveSite({ libraryId: '/s/a', startUrl: 'https://a/', options: {}, schedule: null }, T1);
  seen.push(await C.site('/s/b'), await C.site('/nope'), await C.sites());
  seen.push(await C.setSchedule('/s/a', '5 4 * * *', T2), await C.setSchedule('/nope', null, T2), await C.site('/s/a'));
  // last: a failed INSERT uses up an identity value on PostgreSQL (later ids would differ from SQLite's)
  seen.push(await outcome(() => C.admit(999, 'k1', 'https://s.example/k1', 0, 'start', 3, T0)));
  return seen;
}

/** A repository, a built version's files, and host credentials of the instance and of a teamspace. */
export async function gitStory(b: Backend): Promise<unknown[]> {
  const G = b.git;
  const seen: unknown[] = [];
  await b.sql(`INSERT INTO teamspaces (name, created_at) VALUES ('t', '${T0}')`);
  await b.libraries.upsert(lib('/g/r', { sourceType: 'repo' }), T0);
  const repo = { libraryId: '/g/r', repoUrl: 'https://git/r.git', host: 'git', branch: null, options: { docs: ['docs'] }, lastCommit: 'abc', lastJobId: 4 };
  await G.saveRepo(repo, T0);
  await G.saveRepo({ ...repo, branch: 'dev', lastCommit: null, lastJobId: null }, T1);
  seen.push(await G.repo('/g/r'), await G.repo('/nope'), await outcome(() => G.saveRepo({ ...repo, libraryId: '/nope' }, T0)));
  const v = await b.libraries.createVersion('/g/r', '', 4, T0);
  await G.saveVersionFiles({ versionId: v, ref: 'main', commit: 'abc', settingsHash: 's1' }, new Map([['x.md', '1']]));
  await G.saveVersionFiles(
    { versionId: v, ref: 'dev', commit: 'def', settingsHash: 's2' },
    new Map([
      ['b.md', '2'],
      ['a/B.md', '3'],
      ['a/a.md', '4'],
      ['a-b.md', '5'],
    ]),
  );
  seen.push(await G.versionInfo(v), await G.versionInfo(999), [...(await G.files(v)).entries()], [...(await G.files(999)).entries()]);
  await G.saveVersionFiles({ versionId: v, ref: 'dev', commit: 'fff', settingsHash: 's2' }, new Map());
  seen.push(
    [...(await G.files(v)).entries()],
    await outcome(() => G.saveVersionFiles({ versionId: 999, ref: 'x', commit: 'x', settingsHash: 'x' }, new Map())),
  );
  const host = (teamspaceId: number | null, h: string, secretEnc: string) => ({ teamspaceId, host: h, kind: 'token' as const, username: null, secretEnc });
  await G.putHost(host(null, 'git.b', 's1'), T0);
  await G.putHost(host(null, 'git.a', 's2'), T0);
  await G.putHost(host(1, 'git.b', 's3'), T0);
  await G.putHost({ ...host(null, 'git.b', 's4'), kind: 'basic', username: 'u' }, T1);
  seen.push(await G.hosts(null), await G.hosts(1), await G.host(null, 'git.b'), await G.host(2, 'git.b'));
  seen.push(await G.removeHost(1, 'git.b'), await G.removeHost(1, 'git.b'), await G.hosts(1), await outcome(() => G.putHost(host(9, 'h', 's'), T0)));
  return seen;
}

/** sources.yaml's applied entries, and the ranking models of served versions. */
export async function declaredAndModelsStory(b: Backend): Promise<unknown[]> {
  const D = b.declared;
  const seen: unknown[] = [];
  const row = (libraryId: string, created: boolean, jobId: number | null) => ({
    libraryId,
    kind: 'website',
    spec: { url: libraryId },
    fingerprint: 'f',
    schedule: null,
    created,
    jobId,
  });
  await D.put(row('/d/b', true, 3), T0);
  await D.put(row('/d/B', false, null), T0);
  await D.put({ ...row('/d/b', false, null), fingerprint: 'g', schedule: '@daily' }, T1);
  seen.push(await D.get('/d/b'), await D.get('/nope'), await D.list());
  await D.delete('/d/B');
  await D.delete('/nope');
  seen.push(await D.list());
  const M = b.models;
  for (const id of ['/m/a', '/m/b']) await b.libraries.upsert(lib(id), T0);
  const [va, vb, vc] = [
    await b.libraries.createVersion('/m/a', '', null, T0),
    await b.libraries.createVersion('/m/b', '', null, T0),
    await b.libraries.createVersion('/m/b', 'x', null, T0),
  ];
  for (const v of [va, vb]) await b.libraries.swapIn(v, null, { tokens: 1, snippets: 1 }, T0);
  seen.push(await M.missing(2), await M.get(va), await M.builtAt(va));
  await M.put(va, 2, '{"a":1}', T1);
  await M.put(vb, 1, '{"b":1}', T1);
  await M.put(vc, 1, '{}', T1);
  seen.push(await M.missing(2), await M.get(va), await M.builtAt(vb));
  await M.put(vb, 2, '{"b":2}', T2);
  seen.push(await M.missing(2), await M.get(vb), await outcome(() => M.put(999, 2, '{}', T2)));
  return seen;
}
