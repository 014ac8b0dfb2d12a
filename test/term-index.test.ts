import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqlite } from '../lib/sqlite.ts';
import path from 'node:path';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';
import { analyzeQuery } from '../server/search/query.ts';
import { lexicalTop } from '../server/search/bm25.ts';
import { TUNING } from '../server/search/tuning.ts';
import { VersionBuild } from '../server/ingest/writer.ts';
import { cosineDistance } from '../lib/vector/quantize.ts';
import { retrievePrepared } from '../server/search/retrieve.ts';
import { prepareQuery } from '../server/search/query.ts';
import type { Store } from '../server/store/index.ts';
import type { SnippetInput } from '../lib/model.ts';

/**
 * The term index (server/search/bm25.ts) ranks a version's snippets by FTS5's bm25() formula
 * with per-version statistics. With one library in the database the statistics of the version
 * and of the whole FTS5 index are the same, so both must give the same list and scores when every
 * form is scored as its own term, as FTS5's OR does.
 */

/** Every form of the question's terms as a term of its own (FTS5's `a OR b` semantics). */
const formsApart = (question: string) =>
  analyzeQuery(question)
    .termForms.flat()
    .map((f) => [f]);

const QUESTIONS = [
  'create a child logger with bindings',
  'redact sensitive fields from the log output',
  'transport to write logs to a file',
  'pino.destination sync mode',
  'how do I change the log level at runtime',
  'serializers for errors',
];

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

function fts5Top(store: Store, versionId: number, question: string, limit: number): { id: number; score: number }[] {
  const w = TUNING.bm25.weights;
  const bm25 = `bm25(snippet_fts, 0, ${w.title}, ${w.breadcrumb}, ${w.description}, ${w.code}, ${w.content})`;
  return store.db
    .prepare(`SELECT rowid AS id, -${bm25} AS score FROM snippet_fts WHERE snippet_fts MATCH ? ORDER BY ${bm25} LIMIT ?`)
    .all(`scope:"v${versionId}" AND (${analyzeQuery(question).match})`, limit) as { id: number; score: number }[];
}

function currentVersion(store: Store, libraryId: string): number {
  const v = store.libraries.allCurrentVersions().find((x) => x.libraryId === libraryId && x.tag === '');
  assert.ok(v, libraryId);
  return v.id;
}

test('with one library, the term index gives FTS5 bm25() lists and scores', async () => {
  const s = await startTestServer();
  servers.push(s);
  await loadSearchCorpus(s.services, ['pino']);
  const store = s.services.store;
  const versionId = currentVersion(store, '/pinojs/pino');
  for (const question of QUESTIONS) {
    const ours = lexicalTop(store, versionId, formsApart(question), 40);
    const theirs = fts5Top(store, versionId, question, 40);
    assert.ok(theirs.length > 5, `"${question}" matches`);
    assert.equal(ours.length, theirs.length, question);
    const byId = new Map(theirs.map((h) => [h.id, h.score]));
    ours.forEach((h, i) => {
      assert.ok(Math.abs(h.score - theirs[i]!.score) < 1e-6 * Math.max(1, h.score), `${question} #${i}: ${h.score} vs ${theirs[i]!.score}`);
      // Same score at the same rank; a different id only where scores tie.
      if (byId.has(h.id)) assert.ok(Math.abs(byId.get(h.id)! - h.score) < 1e-6 * Math.max(1, h.score), `${question}: snippet ${h.id}`);
    });
  }
});

test('a resumed build indexes what the interrupted run stored; a retired version leaves no postings', async () => {
  const s = await startTestServer();
  servers.push(s);
  await loadSearchCorpus(s.services, ['pino']);
  const store = s.services.store;
  const complete = currentVersion(store, '/pinojs/pino');
  const snippets = (await store.snippets.list(complete, 100_000)).map(
    (x): SnippetInput =>
      x.kind === 'code'
        ? {
            kind: 'code',
            sourceId: x.sourceId,
            title: x.title,
            description: x.description,
            language: x.language,
            pageTitle: x.pageTitle,
            breadcrumb: x.breadcrumb,
            codeList: x.codeList,
          }
        : { kind: 'info', sourceId: x.sourceId, title: x.title, pageTitle: x.pageTitle, breadcrumb: x.breadcrumb, content: x.content },
  );
  const meta = { id: '/acme/pino-copy', title: 'pino copy', description: '', sourceType: 'repo' as const };
  const first = await s.services.writer.begin(meta);
  await first.add(snippets.slice(0, 300));
  // The first run "dies" here: its open chunk is lost; a new run continues the same version.
  const resumed = await VersionBuild.open(store, s.services.embedder, first.versionId, meta, () => new Date().toISOString());
  await resumed.add(snippets.slice(300));
  await resumed.commit();
  const copy = currentVersion(store, '/acme/pino-copy');
  const position = (id: number) => store.snippets.byIds([id])[0]!.position;
  for (const question of QUESTIONS) {
    const a = lexicalTop(store, complete, analyzeQuery(question).termForms, 20);
    const b = lexicalTop(store, copy, analyzeQuery(question).termForms, 20);
    assert.deepEqual(
      b.map((h) => [position(h.id), h.score.toFixed(9)]),
      a.map((h) => [position(h.id), h.score.toFixed(9)]),
      question,
    );
  }
  // Importing pino again retires the old version and purges its term index.
  await loadSearchCorpus(s.services, ['pino']);
  const rows = store.db.prepare('SELECT count(*) AS n FROM term_postings WHERE version_id = ?').get(complete) as { n: number };
  assert.equal(rows.n, 0);
  assert.equal((store.db.prepare('SELECT count(*) AS n FROM term_chunks WHERE version_id = ?').get(complete) as { n: number }).n, 0);
});

test("a term's inflected forms count as one term: a rare form does not outweigh the word itself", async () => {
  const s = await startTestServer();
  servers.push(s);
  const meta = { id: '/acme/moles', title: 'moles', description: '', sourceType: 'repo' as const };
  const info = (anchor: string, content: string): SnippetInput => ({
    kind: 'info',
    sourceId: `https://moles.test/guide#${anchor}`,
    title: anchor,
    pageTitle: 'Guide',
    breadcrumb: 'Guide',
    content,
  });
  const build = await s.services.writer.begin(meta);
  await build.add([
    info('a', 'Moles tunnel and burrow under the lawn at night.'),
    info('b', 'To tunnel and burrow, a mole needs soft and damp soil.'),
    info('c', 'Rabbits tunnel and burrow too, though not as deep.'),
    info('d', 'A mole tunnels and burrows wherever the worms are.'),
  ]);
  await build.commit();
  const store = s.services.store;
  const versionId = currentVersion(store, '/acme/moles');
  const termForms = analyzeQuery('tunnel and burrow').termForms;
  assert.deepEqual(termForms, [
    ['tunnel', 'tunnels'],
    ['burrow', 'burrows'],
  ]);
  const position = (id: number) => store.snippets.byIds([id])[0]!.sourceId.split('#')[1];
  // Scored apart, `tunnels` and `burrows` are rare (one snippet of four) and `d` wins by far.
  const apart = lexicalTop(
    store,
    versionId,
    termForms.flat().map((f) => [f]),
    4,
  );
  assert.equal(position(apart[0]!.id), 'd');
  assert.ok(apart[0]!.score > 100 * apart[1]!.score);
  // As one term each, every snippet holds both words: none stands out.
  const grouped = lexicalTop(store, versionId, termForms, 4);
  assert.equal(grouped.length, 4);
  assert.ok(grouped[0]!.score < 0.01, `${grouped[0]!.score}`);
});

test('a database from before the term index gets it at start-up and answers as before', async () => {
  const s = await startTestServer();
  servers.push(s);
  await loadSearchCorpus(s.services, ['pino', 'zod']);
  const ask = async (server: TestServer, q: string) =>
    (await server.api(`/api/v2/context?${new URLSearchParams({ libraryId: '/pinojs/pino', query: q, type: 'json' })}`)).json();
  const before = await Promise.all(QUESTIONS.map((q) => ask(s, q)));
  await s.close();
  // What a database written before migration 009 looks like: no term index, versions not marked.
  const db = openSqlite(path.join(s.dataDir, 'stacks.db'));
  db.exec('DELETE FROM term_postings; DELETE FROM term_chunks; UPDATE library_versions SET search_indexed = 0;');
  db.close();
  const again = await startTestServer({ dataDir: s.dataDir });
  servers.push(again);
  assert.deepEqual(await again.services.store.libraries.searchUnindexedVersions(), []);
  const after = await Promise.all(QUESTIONS.map((q) => ask(again, q)));
  assert.deepEqual(after, before);
});

test('the vector list: KNN on the 8-bit vectors, exact cosine from the float copies, close to an exact scan', async () => {
  const s = servers[0]!;
  const store = s.services.store;
  const versionId = currentVersion(store, '/pinojs/pino');
  const ids = (await store.snippets.list(versionId, 100_000)).map((x) => x.id);
  const copies = store.snippets.withEmbeddings(ids).embeddings;
  assert.equal(copies.size, ids.length, 'every snippet has its float copy');
  let overlap = 0;
  const questions = [...QUESTIONS, 'pretty print logs in development', 'log levels and custom levels', 'async logging performance'];
  for (const question of questions) {
    const q = await prepareQuery(question, s.services.embedder);
    const exact = ids
      .map((id) => ({ id, d: cosineDistance(q.vector!, copies.get(id)!) }))
      .sort((a, b) => a.d - b.d)
      .slice(0, 20);
    // The vector list alone: a question without terms reaches no BM25 list.
    const list = retrievePrepared(store, versionId, { ...q, termForms: [] }, { vectorLimit: 20 });
    const byRank = list.filter((c) => c.vectorRank !== null).sort((a, b) => a.vectorRank! - b.vectorRank!);
    // The candidates the vector list kept: exact similarities, best first.
    for (const c of byRank) assert.ok(Math.abs(c.similarity! - (1 - cosineDistance(q.vector!, copies.get(c.snippet.id)!))) < 1e-9);
    for (let i = 1; i < byRank.length; i++) assert.ok(byRank[i - 1]!.similarity! >= byRank[i]!.similarity!);
    // The 8-bit scan's 20 nearest against the exact 20 nearest.
    const found = new Set(store.search.knn(versionId, q.vector!, 20).map((h) => h.id));
    overlap += exact.filter((e) => found.has(e.id)).length / exact.length;
  }
  assert.ok(overlap / questions.length >= 0.9, `top-20 overlap ${(overlap / questions.length).toFixed(2)}`);
});
