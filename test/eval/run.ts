/**
 * Retrieval evaluation: `npm run eval`. Starts the real server on a temporary data dir, imports the
 * corpus bundles over HTTP and asks every question of test/eval/questions* of both endpoints in both
 * orders (docs/retrieval.md, "Evaluation"). `-- --verbose` lists the dev split's misses, `-- --only
 * pino,zod` loads and asks a subset, `-- --save FILE` writes the dev split's ranks per question and
 * `-- --compare FILE` compares this run with a saved one question by question, to tell a change
 * from noise. `-- --modes` runs the older in-process comparison of the pipeline's modes.
 * `-- --judge-pack DIR` writes the held-out questions for a judge to read (with `-- --judge-reuse
 * EARLIER_DIR`, only those whose answer changed) and `-- --judge-score DIR` scores the verdicts
 * written beside them (with `-- --judge-save OUT`, stores them without the texts, as in
 * test/eval/judged; test/eval/judge.ts). `-- --postgres debian|pgvector` asks the same questions of
 * the loaded instance copied into PostgreSQL too and compares the backends (test/eval/postgres.ts);
 * `-- --cached-vectors` takes the corpus's model vectors from their cache instead of embedding them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Services } from '../../server/services.ts';
import type { Store } from '../../server/store/index.ts';
import { prepareQuery, type PreparedQuery } from '../../server/search/query.ts';
import { answerForVersion, type AnswerOptions } from '../../server/search/pipeline.ts';
import { resolveLibrary } from '../../server/search/context-service.ts';
import { QUESTIONS, type EvalQuestion } from './questions.ts';
import { parseLibraryId } from '../../lib/model.ts';
import { BUNDLES, loadCorpus } from './corpus.ts';
import { evaluateSelection, formatSelection } from './selection.ts';
import { firstHit, loadQuestions, summarize, type Metrics } from './question-set.ts';
import { compareRuns, type SavedRank } from './compare.ts';
import { carryOver, compactPack, firstSnippets, formatJudged, judgedFigures, readJudged, type PackEntry } from './judge.ts';
import type { Asked } from './http.ts';
import type { TestServer } from '../helpers/server.ts';

export type { Metrics };
export { BUNDLES, loadCorpus };

export type Mode = 'bm25' | 'vectors' | 'hybrid' | 'hybrid+rerank';
export const MODES: Mode[] = ['bm25', 'vectors', 'hybrid', 'hybrid+rerank'];

/**
 * A mode: the lists the question reaches and the pipeline options it is answered with. One list
 * alone is the question without what the other reads (the pipeline has no switch for it): without
 * its embedding the vector list is empty, without its terms the BM25 list.
 */
interface ModeSpec {
  lists: 'both' | 'bm25' | 'vectors';
  options: AnswerOptions;
}

const modeSpecs: Record<Mode, ModeSpec> = {
  bm25: { lists: 'bm25', options: { fast: true, unpacked: true } },
  vectors: { lists: 'vectors', options: { fast: true, unpacked: true } },
  hybrid: { lists: 'both', options: { fast: true, unpacked: true } },
  // The shipped default of /api/v2/context: fused, reranked, deduplicated, context added, packed.
  'hybrid+rerank': { lists: 'both', options: {} },
};

function reaching(q: PreparedQuery, lists: ModeSpec['lists']): PreparedQuery {
  if (lists === 'bm25') return { ...q, vector: null };
  if (lists === 'vectors') return { ...q, termForms: [] };
  return q;
}

export interface EvalResult {
  overall: Record<Mode, Metrics>;
  paraphrase: Record<Mode, Metrics>;
  /** Questions written after the constants were chosen. */
  heldOut: Record<Mode, Metrics>;
  misses: { mode: Mode; question: string; got: string[] }[];
  hasVectors: boolean;
}

/** Asks the questions in every mode. */
export async function evaluate(services: Services<Store>, questions: EvalQuestion[] = QUESTIONS): Promise<EvalResult> {
  const ranks: Record<Mode, { r: number | null; para: boolean; held: boolean }[]> = { bm25: [], vectors: [], hybrid: [], 'hybrid+rerank': [] };
  const misses: EvalResult['misses'] = [];
  for (const q of questions) {
    const { library, choice } = resolveLibrary(services.store, services.access, null, q.libraryId);
    const prepared = await prepareQuery(q.question, services.embedder);
    for (const mode of MODES) {
      const { lists, options } = modeSpecs[mode];
      const items = answerForVersion(services.store, reaching(prepared, lists), { versionId: choice.version.id, libraryId: library.id }, options);
      const ids = items.map((c) => c.snippet.sourceId);
      const r = firstHit(ids.slice(0, 10), q.expect);
      ranks[mode].push({ r, para: !!q.paraphrase, held: !!q.heldOut });
      if (r === null || r > 5) misses.push({ mode, question: `${q.libraryId}: ${q.question}`, got: ids.slice(0, 5) });
    }
  }
  const overall = {} as Record<Mode, Metrics>;
  const paraphrase = {} as Record<Mode, Metrics>;
  const heldOut = {} as Record<Mode, Metrics>;
  for (const mode of MODES) {
    overall[mode] = summarize(ranks[mode].map((x) => x.r));
    paraphrase[mode] = summarize(ranks[mode].filter((x) => x.para).map((x) => x.r));
    heldOut[mode] = summarize(ranks[mode].filter((x) => x.held).map((x) => x.r));
  }
  return { overall, paraphrase, heldOut, misses, hasVectors: services.embedder !== null };
}

export function formatTable(result: EvalResult): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);
  const lines: string[] = [];
  for (const [label, set] of [
    ['overall', result.overall],
    ['paraphrase subset', result.paraphrase],
    ['held-out subset', result.heldOut],
  ] as const) {
    const n = set.bm25.n;
    if (n === 0) continue;
    lines.push(`${label} (${n} questions)`);
    lines.push(`  ${'mode'.padEnd(15)} ${'hit@1'.padStart(7)} ${'hit@5'.padStart(7)} ${'MRR@10'.padStart(7)}`);
    for (const mode of MODES) {
      const m = set[mode];
      lines.push(`  ${mode.padEnd(15)} ${pct(m.hit1)} ${pct(m.hit5)} ${m.mrr10.toFixed(3).padStart(7)}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const verbose = args.includes('--verbose');
  const onlyIdx = args.indexOf('--only');
  const only = onlyIdx >= 0 ? (args[onlyIdx + 1] ?? '').split(',').filter(Boolean) : null;
  if (args.includes('--modes')) return modes(verbose, only);
  const scoreIdx = args.indexOf('--judge-score');
  if (scoreIdx >= 0) return scoreJudged(args, args[scoreIdx + 1]!);
  const { ALL_BUNDLES, askAll, devMisses, devOfftopicAnswered, formatReport, report, startEvalServer } = await import('./http.ts');
  const bundles = only ? ALL_BUNDLES.filter((b) => only.some((o) => b.startsWith(o))) : ALL_BUNDLES;
  const started = performance.now();
  const server = await startEvalServer(bundles, { cachedVectors: args.includes('--cached-vectors') });
  try {
    const loaded = new Set(server.services.store.libraries.list().map((l) => l.id));
    const questions = loadQuestions().filter(
      (q) => q.kind === 'offtopic' || [q.libraryId, ...q.library].some((l) => l && loaded.has(parseLibraryId(l)?.id ?? '')) || !only,
    );
    console.log(`loaded ${bundles.join(', ')} over HTTP in ${((performance.now() - started) / 1000).toFixed(1)} s; ${questions.length} questions`);
    const asked = await askAll(server, questions);
    const pgIdx = args.indexOf('--postgres');
    if (pgIdx >= 0) console.log('SQLite:');
    console.log(formatReport(report(asked), { kinds: true }));
    if (pgIdx >= 0) {
      const { compareBackends, startPostgresTwin } = await import('./postgres.ts');
      const flavor = args[pgIdx + 1];
      if (flavor !== 'debian' && flavor !== 'pgvector') throw new Error(`--postgres takes debian or pgvector, not ${flavor}`);
      const twin = await startPostgresTwin(server, flavor);
      try {
        const onPg = await askAll(twin, questions);
        console.log(`\nPostgreSQL ${flavor} (the same instance copied in ${twin.seconds.toFixed(0)} s):`);
        console.log(formatReport(report(onPg), { kinds: true }));
        console.log(['', ...compareBackends(report(asked), report(onPg))].join('\n'));
      } finally {
        await twin.close();
      }
    }
    if (verbose) for (const line of [...devMisses(asked, 'search:txt'), ...devOfftopicAnswered(asked)]) console.log(line);
    // --save FILE: per-question ranks of the dev split; --compare FILE: this run against a saved one,
    // question by question, with paired bootstrap intervals (test/eval/compare.ts).
    const saveIdx = args.indexOf('--save');
    const compareIdx = args.indexOf('--compare');
    if (saveIdx >= 0 || compareIdx >= 0) {
      const { rankOf } = await import('./http.ts');
      const rows: SavedRank[] = asked
        .filter((a) => a.q.split === 'dev')
        .map((a) => ({
          id: a.q.id,
          kind: a.q.kind,
          search: rankOf(a, 'search:txt'),
          searchJson: rankOf(a, 'search:json'),
          context: rankOf(a, 'context:txt'),
          contextJson: rankOf(a, 'context:json'),
        }));
      if (compareIdx >= 0) console.log(['', ...compareRuns(JSON.parse(fs.readFileSync(args[compareIdx + 1]!, 'utf8')) as SavedRank[], rows)].join('\n'));
      if (saveIdx >= 0) fs.writeFileSync(args[saveIdx + 1]!, JSON.stringify(rows, null, 1));
    }
    // --judge-pack DIR: the held-out questions a judge should read (test/eval/judge.ts).
    const packIdx = args.indexOf('--judge-pack');
    if (packIdx >= 0) await writeJudgePack(server, asked, args, args[packIdx + 1]!);
  } finally {
    await server.close();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
}

/** --judge-score DIR: the verdicts written beside a judge pack, scored by set and by kind of question (test/eval/judge.ts). */
function scoreJudged(args: string[], dir: string): void {
  const { entries, verdicts } = readJudged(dir);
  console.log(formatJudged(judgedFigures(entries, verdicts)));
  // The same questions by kind: where the judged gap is.
  const kindOf = new Map(loadQuestions().map((q) => [q.id, q.kind]));
  console.log(
    formatJudged(
      judgedFigures(entries, verdicts, (e) => kindOf.get(e.id) ?? '?'),
      'by kind of question (every held-out set):',
    ),
  );
  // --judge-save OUT: the pack without its texts and one verdict per question, to commit (test/eval/judged).
  const saveJudgedIdx = args.indexOf('--judge-save');
  if (saveJudgedIdx >= 0) {
    const out = args[saveJudgedIdx + 1]!;
    const ids = new Set(entries.filter((e) => e.urlRank !== 1).map((e) => e.id));
    // Only the place: a judge's reasons would tell a reader of the repository about the blind questions.
    const last = new Map(verdicts.filter((v) => ids.has(v.id)).map((v) => [v.id, { id: v.id, first: v.first }]));
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'pack.json'), `${JSON.stringify(compactPack(entries), null, 1)}\n`);
    fs.writeFileSync(
      path.join(out, 'verdicts.json'),
      `${JSON.stringify(
        [...last.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
        null,
        1,
      )}\n`,
    );
    console.log(`${out}: ${entries.length} questions, ${last.size} verdicts`);
  }
}

/** --judge-pack DIR: the held-out questions a judge should read, with their answers where the listed address is not first (test/eval/judge.ts). */
async function writeJudgePack(server: TestServer, asked: Asked[], args: string[], dir: string): Promise<void> {
  const { rankOf, requestPath } = await import('./http.ts');
  const pack: PackEntry[] = [];
  for (const a of asked.filter((x) => x.q.set === 'holdout' && x.q.kind !== 'offtopic')) {
    const urlRank = rankOf(a, 'search:txt');
    const entry: PackEntry = { id: a.q.id, set: a.q.holdout ?? 'holdout', urlRank };
    if (urlRank !== 1) {
      const res = await server.api(requestPath('search', 'txt', a.q)!, { auth: null });
      Object.assign(entry, { query: a.q.query, library: a.q.library, expect: a.q.expect, snippets: firstSnippets(await res.text()) });
    }
    pack.push(entry);
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'pack.json'), JSON.stringify(pack, null, 1));
  console.log(
    `${dir}/pack.json: ${pack.filter((e) => e.urlRank !== 1).length} of ${pack.length} held-out questions to judge (write verdicts*.json beside it, then --judge-score ${dir})`,
  );
  // --judge-reuse EARLIER_DIR: keep the verdicts of answers that did not change; only the rest is to judge.
  const reuseIdx = args.indexOf('--judge-reuse');
  if (reuseIdx >= 0) {
    const { reused, toJudge } = carryOver(pack, readJudged(args[reuseIdx + 1]!));
    fs.writeFileSync(path.join(dir, 'verdicts-reused.json'), JSON.stringify(reused, null, 1));
    fs.writeFileSync(path.join(dir, 'to-judge.json'), JSON.stringify(toJudge, null, 1));
    console.log(`${reused.length} verdicts kept from ${args[reuseIdx + 1]} (verdicts-reused.json); ${toJudge.length} answers new or changed (to-judge.json)`);
  }
}

/** The pipeline function in four modes (bm25, vectors, hybrid, hybrid+rerank) on the legacy questions, in process. */
async function modes(verbose: boolean, only: string[] | null): Promise<void> {
  const bundles = only ? BUNDLES.filter((b) => only.some((o) => b.startsWith(o))) : BUNDLES;
  const started = performance.now();
  const { services, dataDir } = await loadCorpus(bundles);
  const loadedIds = new Set(services.store.libraries.list().map((l) => l.id));
  const questions = QUESTIONS.filter((q) => loadedIds.has(parseLibraryId(q.libraryId)?.id ?? ''));
  console.log(
    `loaded ${bundles.join(', ')} in ${((performance.now() - started) / 1000).toFixed(1)} s; embedder: ${services.embedder?.id ?? 'none (vector modes are empty)'}`,
  );
  const result = await evaluate(services, questions);
  console.log(formatTable(result));
  if (verbose) for (const m of result.misses) console.log(`miss [${m.mode}] ${m.question}\n    got: ${m.got.join('\n         ')}`);
  const shipped = result.overall['hybrid+rerank'];
  const base = result.overall.bm25;
  const pShipped = result.paraphrase['hybrid+rerank'];
  const pBase = result.paraphrase.bm25;
  console.log(
    `shipped default vs BM25 hit@5: overall ${(shipped.hit5 * 100).toFixed(1)}% vs ${(base.hit5 * 100).toFixed(1)}%, paraphrase ${(pShipped.hit5 * 100).toFixed(1)}% vs ${(pBase.hit5 * 100).toFixed(1)}%`,
  );
  // Library selection of /api/v3/search (fuzzy names, library-less questions): test/eval/selection.ts.
  console.log(formatSelection(evaluateSelection(services), verbose));
  services.store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
