// The search side on PostgreSQL: a fixture corpus loaded into SQLite and copied into PostgreSQL
// (`stacks store copy`), the search services built on each backend's store, and the same questions
// asked of both: /api/v2/context with and without a version (and in research mode), /api/v3/search
// naming libraries and naming none (selection then reads the catalogue and probes the index),
// misspelled words, an off-topic question refused, /api/v2/libs/search. Without pgvector the
// answers are the same; with it (HNSW neighbours are approximate) most of the same snippets.
// The round trips of each answer are counted, and a v3 search's statements checked (its snapshot, at
// most two after it, none twice); a model stored again is ranked with from the next search; then a
// version swapped in through a second PgStore (another node) is answered by the first at its next request.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { ApiError } from '../lib/errors.ts';
import type { Reader } from '../lib/model.ts';
import { bundleCodeSnippetSchema, bundleInfoSnippetSchema, codeSnippetInput, infoSnippetInput } from '../server/ingest/bundle.ts';
import { TermChunkBuilder } from '../server/ingest/term-chunks.ts';
import { toRow } from '../server/ingest/writer.ts';
import type { ContextRequest, Rendered, SearchRequest } from '../server/search/answer-types.ts';
import { StoreContextService } from '../server/search/context-service.ts';
import type { ServingStore } from '../server/search/serving.ts';
import { StoreLibrarySearch } from '../server/search/library-search.ts';
import { MultiLibrarySearch } from '../server/search/search-service.ts';
import { MODEL_FORMAT } from '../server/search/ranker.ts';
import { PgStore } from '../server/store/pg/index.ts';
import { copyStoreToPostgres } from '../server/system/store-copy.ts';
import { CORPUS_BUNDLES } from './helpers/fixtures.ts';
import { startPostgres, type TestPostgres } from './helpers/postgres.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { T0 } from './helpers/source-stories.ts';

let sqlite: TestServer;
let debian: TestPostgres;
let withVector: TestPostgres;
let member: Reader;
const stores: PgStore[] = [];
/** The copy the first test asks without pgvector; the last one swaps a version into it. */
let onDebian: { store: PgStore; url: string } | null = null;

before(async () => {
  [debian, withVector, sqlite] = await Promise.all([startPostgres('debian'), startPostgres('pgvector'), startTestServer()]);
  await loadSearchCorpus(sqlite.services, ['fastify', 'fastify-v4.29.1', 'pino', 'zod']);
  member = await sqlite.services.keys.verify(sqlite.key);
  assert.ok(member);
});

after(async () => {
  for (const s of stores) await s.close();
  await sqlite?.close();
  await Promise.all([debian?.close(), withVector?.close()]);
});

/** The search services of one store, built as services.ts searchServices builds them (no retrieval workers in dev mode). */
function servicesOn(store: ServingStore) {
  const { embedder, rarity, access, config, log, versions } = sqlite.services;
  const context = new StoreContextService(() => ({ store, versions, embedder, rarity, access, config, log }));
  const search = new MultiLibrarySearch(() => ({ store, embedder, rarity, access, versions, log }));
  const libs = new StoreLibrarySearch(() => ({ selection: search, access }));
  return { context, search, libs };
}

type Services = ReturnType<typeof servicesOn>;

/** A copy of the SQLite data dir in a new database of `server`, opened as a node. */
async function copied(server: TestPostgres, name: string): Promise<{ store: PgStore; url: string }> {
  const url = await server.createDatabase(name);
  await copyStoreToPostgres(sqlite.dataDir, url);
  const store = await PgStore.open(url, { poolSize: 4 });
  stores.push(store);
  return { store, url };
}

/** What an endpoint answered: its JSON and headers, or the error it refused with. */
type Answer = { json: unknown; headers: Record<string, string> } | { error: string };

async function answered(fn: () => Promise<Rendered<unknown>>): Promise<Answer> {
  try {
    const r = await fn();
    return { json: r.json, headers: r.headers };
  } catch (err) {
    if (err instanceof ApiError) return { error: err.code };
    throw err;
  }
}

interface Question {
  label: string;
  ask: (s: Services) => Promise<Answer>;
}

const context =
  (req: Pick<ContextRequest, 'libraryId' | 'query'> & Partial<ContextRequest>, principal: Reader = null) =>
  (s: Services) =>
    answered(() => s.context.query({ fast: false, researchMode: false, ...req }, principal));
const search = (req: Omit<SearchRequest, 'libraries'> & { libraries?: string[] }) => (s: Services) =>
  answered(() => s.search.search({ libraries: [], ...req }, null));

/** A subset of each kind (the suite's CPU budget is small). */
const QUESTIONS: Question[] = [
  { label: 'context', ask: context({ libraryId: '/pinojs/pino', query: 'redact secrets from logs' }) },
  { label: 'context with a version', ask: context({ libraryId: '/fastify/fastify/v4.29.1', query: 'register a plugin with encapsulation' }) },
  { label: 'context, fast', ask: context({ libraryId: '/fastify/fastify', query: 'set a custom error handler', fast: true }) },
  { label: 'context, misspelled', ask: context({ libraryId: '/fastify/fastify', query: 'custom serilaizer for a route reponse' }) },
  { label: 'context, unknown library', ask: context({ libraryId: '/nobody/nothing', query: 'anything' }) },
  { label: 'search with libraries', ask: search({ query: 'child logger with bindings', libraries: ['pino', 'zod'] }) },
  { label: 'search with a version', ask: search({ query: 'onRequest hook lifecycle', libraries: ['fastify'], version: '4.29.1' }) },
  { label: 'search naming a library in the question', ask: search({ query: 'how do I parse an email string with zod' }) },
  { label: 'search naming none', ask: search({ query: 'redact sensitive fields in log output' }) },
  { label: 'search naming none, misspelled', ask: search({ query: 'discriminated unoin of object schemas' }) },
  { label: 'search off-topic', ask: search({ query: 'how long should sourdough bread proof before baking' }) },
  {
    label: 'libs search',
    ask: async (s) => ({ json: await s.libs.search({ libraryName: 'fastify', query: 'plugins and hooks' }, null), headers: {} }),
  },
  { label: 'libraries list', ask: async (s) => ({ json: await s.libs.list(null), headers: {} }) },
  { label: 'search with two libraries, catalogue built', ask: search({ query: 'serialize an object to a string', libraries: ['pino', 'zod'] }) },
];

/**
 * The statements sent on a pool's connections (every one a round trip, BEGIN and COMMIT included),
 * each as its text and parameters, recorded as they are sent.
 */
function recordStatements(store: PgStore): string[] {
  const sent: string[] = [];
  const counted = new WeakSet<pg.PoolClient>();
  store.pool.on('acquire', (client: pg.PoolClient) => {
    if (counted.has(client)) return;
    counted.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [first, second] = args as [string | { text: string; values?: unknown[] }, unknown];
      const text = typeof first === 'string' ? first : first.text;
      const values = typeof first === 'string' ? second : first.values;
      sent.push(`${text.replace(/\s+/g, ' ')} ${JSON.stringify(values ?? [])}`);
      return query(...args);
    };
  });
  return sent;
}

let sqliteAnswers: Answer[] | null = null;
async function onSqlite(): Promise<Answer[]> {
  if (sqliteAnswers) return sqliteAnswers;
  const s = servicesOn(sqlite.services.store);
  const out: Answer[] = [];
  for (const q of QUESTIONS) out.push(await q.ask(s));
  return (sqliteAnswers = out);
}

function snippetIds(a: Answer): string[] {
  if ('error' in a) return [];
  const json = a.json as {
    codeSnippets?: { codeId?: string; codeTitle: string }[];
    infoSnippets?: { pageId?: string; breadcrumb?: string; content: string }[];
  };
  const code = (json.codeSnippets ?? []).map((c) => `c:${c.codeId ?? ''}:${c.codeTitle}`);
  const info = (json.infoSnippets ?? []).map((i) => `i:${i.pageId ?? ''}:${i.breadcrumb ?? ''}:${i.content.slice(0, 40)}`);
  return [...code, ...info];
}

test('without pgvector: context, v3 search, libs search and research answer on PostgreSQL as on SQLite', async () => {
  const want = await onSqlite();
  onDebian = await copied(debian, 'serving');
  const { store } = onDebian;
  const sent = recordStatements(store);
  const s = servicesOn(store);
  const perAnswer: [string, number][] = [];
  const statementsOf = new Map<string, string[]>();
  for (const [i, q] of QUESTIONS.entries()) {
    const before = sent.length;
    const got = await q.ask(s);
    perAnswer.push([q.label, sent.length - before]);
    statementsOf.set(q.label, sent.slice(before));
    assert.deepEqual(got, want[i], q.label);
  }
  console.log(`round trips per answer on PostgreSQL (the first search builds the catalogue): ${perAnswer.map(([l, n]) => `${l}: ${n}`).join('; ')}`);
  // A bound, not a figure: a read per candidate or per library of the catalogue would pass it.
  for (const [label, n] of perAnswer) assert.ok(n <= 30, `${label}: ${n} round trips`);
  // A v3 search once the catalogue is built (the first one builds it): its reads in its snapshot,
  // none before it (the overview check reads the catalogue held), after it only the context around
  // the hits (the model times come with the catalogue, the words' counts from the snapshot, the
  // sections' code in one statement), and no statement sent twice.
  const steady = QUESTIONS.filter((q) => q.label.startsWith('search')).slice(1);
  assert.ok(steady.length >= 5);
  for (const { label } of steady) {
    const st = statementsOf.get(label)!;
    const listing = `${label}:\n  ${st.map((x) => x.slice(0, 160)).join('\n  ')}`;
    assert.match(st[0] ?? '', /^BEGIN ISOLATION LEVEL REPEATABLE READ/, listing);
    const after = st.slice(st.indexOf('COMMIT []') + 1);
    assert.ok(after.length <= 2, `${after.length} round trips after the snapshot; ${listing}`);
    assert.ok(!after.some((x) => /search_models|snippet_vocab/.test(x)), listing);
    assert.equal(new Set(st).size, st.length, `a statement sent twice; ${listing}`);
    // Several libraries' version rows and postings are read ahead together (prefetch), not per library.
    for (const read of [/FROM library_versions v WHERE v\.id = ANY/, /SELECT version_id, term, base_id, df, data FROM term_postings/])
      assert.ok(st.filter((x) => read.test(x)).length <= 1, `${read} more than once; ${listing}`);
  }
  // The questions did what they are for: answers, a version served, a typo read, the off-topic one refused.
  assert.ok(want.filter((a) => 'json' in a).length >= 10);
  assert.equal((want[1] as { headers: Record<string, string> }).headers['X-Stacks-Library-Version'], 'v4.29.1');
  assert.deepEqual(want[4], { error: 'library_not_found' });
  assert.deepEqual(want[10], { error: 'no_documentation_found' });
  assert.match((want[8] as { headers: Record<string, string> }).headers['X-Stacks-Libraries'] ?? '', /pino/);

  // Research mode: one synthesized answer from the same sources, and the member's quota taken in PostgreSQL.
  const research = context({ libraryId: '/pinojs/pino', query: 'how do I redact fields and add a child logger?', researchMode: true }, member);
  const [onSqliteResearch, onPg] = [await research(servicesOn(sqlite.services.store)), await research(s)];
  assert.ok('json' in onPg);
  assert.deepEqual(onPg.json, (onSqliteResearch as { json: unknown }).json);
  assert.equal(onPg.headers['X-Stacks-Research-Used'], '1');
});

/** The questions asked with pgvector: where its neighbours weigh in (a version, several libraries, none named, the refusal). */
const WITH_VECTOR = new Set(['context', 'context with a version', 'search with libraries', 'search with a version', 'search naming none', 'search off-topic']);

test('with pgvector: the same libraries and versions answer, with most of the same snippets', async () => {
  const want = await onSqlite();
  const { store } = await copied(withVector, 'serving');
  const s = servicesOn(store);
  let shared = 0;
  let total = 0;
  for (const [i, q] of QUESTIONS.entries()) {
    if (!WITH_VECTOR.has(q.label)) continue;
    const got = await q.ask(s);
    const w = want[i]!;
    if ('error' in w) {
      assert.deepEqual(got, w, q.label);
      continue;
    }
    assert.ok('json' in got, q.label);
    for (const h of ['X-Stacks-Library', 'X-Stacks-Library-Version', 'X-Stacks-Libraries', 'X-Stacks-Search-Version', 'X-Stacks-Vectors'])
      assert.equal(got.headers[h], w.headers[h], `${q.label}: ${h}`);
    const ids = new Set(snippetIds(got));
    const expected = snippetIds(w);
    shared += expected.filter((id) => ids.has(id)).length;
    total += expected.length;
  }
  const overlap = shared / total;
  console.log(`pgvector: ${(overlap * 100).toFixed(1)}% of SQLite's answer snippets returned`);
  assert.ok(overlap >= 0.8, `overlap ${overlap}`);
});

test('a model stored again is ranked with from the next search, even when its time is not the newest', async () => {
  // A search ranks with the model times its catalogue view read under the snapshot's stamp: the stamp must change with any model stored.
  const { store } = await copied(debian, 'models');
  const sent = recordStatements(store);
  const s = servicesOn(store);
  const current = new Map((await store.libraries.allCurrentVersions()).filter((v) => v.tag === '').map((v) => [v.libraryId, v.id]));
  const [pino, zod] = [current.get('/pinojs/pino')!, current.get('/colinhacks/zod')!];
  // The stored models say nothing (no weights: the default model ranks), so the answers stay the same.
  const model = JSON.stringify({ weights: [], packages: [] });
  await store.models.put(zod, MODEL_FORMAT, model, '2026-01-05T00:00:00.000Z');
  await store.models.put(pino, MODEL_FORMAT, model, '2026-01-03T00:00:00.000Z');
  const ask = async () => {
    const before = sent.length;
    const r = await s.search.search({ query: 'child logger with bindings', libraries: ['pino'] }, null);
    return { json: r.json, modelRead: sent.slice(before).some((x) => /\bmodel FROM search_models\b/.test(x)) };
  };
  const first = await ask();
  assert.equal(first.modelRead, true, 'the new model is read');
  const again = await ask();
  assert.deepEqual(again, { json: first.json, modelRead: false }, 'then served from the parsed ones');
  // Stored again at a time before zod's: neither the count nor the newest time of the models changes.
  await store.models.put(pino, MODEL_FORMAT, model, '2026-01-04T00:00:00.000Z');
  assert.deepEqual(await ask(), { json: first.json, modelRead: true });
});

/** Another node writes a version as the writer does (rows, term index, swap): pino's documentation as tag v9.9.9. */
async function swapInOnOtherNode(url: string): Promise<void> {
  const node = await PgStore.open(url, { poolSize: 2 });
  stores.push(node);
  const doc = JSON.parse(fs.readFileSync(path.join(CORPUS_BUNDLES, 'pino.json'), 'utf8')) as { libraries: Record<string, unknown>[] };
  const l = doc.libraries[0]!;
  const rows = [
    ...(l.codeSnippets as unknown[]).map((x) => codeSnippetInput(bundleCodeSnippetSchema.parse(x))),
    ...(l.infoSnippets as unknown[]).map((x) => infoSnippetInput(bundleInfoSnippetSchema.parse(x))),
  ].map((x, i) => toRow(x, i));
  const v = await node.libraries.createVersion('/pinojs/pino', 'v9.9.9', null, T0);
  const ids = await node.snippets.insertBatch(v, rows, null);
  const terms = new TermChunkBuilder();
  for (const [j, id] of ids.entries()) {
    if (!terms.fits(id)) {
      const chunk = terms.take();
      if (chunk) await node.terms.writeChunk(v, chunk);
    }
    terms.add(id, rows[j]!.fts);
  }
  const last = terms.take();
  if (last) await node.terms.writeChunk(v, last);
  await node.libraries.markSearchIndexed(v);
  await node.libraries.swapIn(v, null, { tokens: rows.reduce((n, r) => n + r.tokens, 0), snippets: rows.length }, T0);
}

test('a version swapped in through another node is answered by this node at its next request', async () => {
  const { store, url } = onDebian ?? (await copied(debian, 'swap'));
  const s = servicesOn(store);
  const ask = () => s.search.search({ query: 'child logger with bindings', libraries: ['pino'], version: '9.9.9' }, null);
  // Before: pino has no 9.9.9; the current documentation answers, unverified (and this node's catalogue is built).
  const before = await ask();
  assert.equal(before.headers['X-Stacks-Search-Version'], 'unverified');
  assert.ok(!(await s.libs.list(null)).find((l) => l.id === '/pinojs/pino')!.versions.includes('v9.9.9'));

  await swapInOnOtherNode(url);
  const after = await ask();
  assert.equal(after.headers['X-Stacks-Search-Version'], 'verified');
  assert.equal(after.headers['X-Stacks-Libraries'], '/pinojs/pino/v9.9.9');
  assert.ok((await s.libs.list(null)).find((l) => l.id === '/pinojs/pino')!.versions.includes('v9.9.9'));
  const ctx = await s.context.query({ libraryId: '/pinojs/pino/v9.9.9', query: 'child logger with bindings', fast: false, researchMode: false }, null);
  assert.equal(ctx.headers['X-Stacks-Library-Version'], 'v9.9.9');
  assert.ok((ctx.json as { codeSnippets: unknown[] }).codeSnippets.length > 0);
});
