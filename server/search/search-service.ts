import type { Store } from '../store/index.ts';
import type { PgStore } from '../store/pg/index.ts';
import { pgRequestReads } from '../store/pg/version-reads.ts';
import { sqliteSearchReads, type SearchReads } from '../store/version-reads.ts';
import { isStep, searchReadsOf, settledInTurn, sqliteOnly, type ServingStore } from './serving.ts';
import type { Embedder } from '../embed/types.ts';
import type { Logger } from '../log.ts';
import { principalOf, type Reader } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AccessPolicy, Rendered, SearchContextResponse, SearchRequest, SearchService } from './answer-types.ts';
import { Catalog, type CatalogView } from './catalog.ts';
import { LibrarySelector, type SelectionRequest } from './select.ts';
import type { VersionProbe } from '../store/search-probe.ts';
import { prepareQueryOrLexical, Question, type PreparedQuery } from './query.ts';
import { byScore, type Candidate } from './retrieve.ts';
import { candidateLimits, rankCandidates, rankCandidatesAsync, versionCandidates, versionCandidatesAsync } from './pipeline.ts';
import { runAsync, runSync, type Step } from './read-steps.ts';
import { searchAnswer, type RankedSearch } from './search-answer.ts';
import { searchTarget, versionTarget, type SearchTarget } from './search-target.ts';
import type { VersionRequests } from './version-fetch.ts';
import type { RetrievalPool } from './retrieval-pool.ts';
import { answerability, answerabilityStep, type Answerability } from './nothing-found.ts';
import type { WordRarity } from './word-rarity.ts';
import { correctSpellingStep } from './spelling.ts';
import { mayAskOverview, overviewText } from './overview.ts';
import { TUNING } from './tuning.ts';
import { modelTimesOf, wordsReadOnce } from './request-reads.ts';

/** The per-library stage for one library (a test replaces it to fail one library). */
export type LibraryRetrieval = (target: SearchTarget, q: PreparedQuery) => Promise<Candidate[]>;
/** The global ranking stage (a test replaces it to make it fail, or to fix the scores). */
export type GlobalRerank = (q: PreparedQuery, candidates: Candidate[]) => Candidate[];

export interface SearchDeps {
  store: ServingStore;
  embedder: Embedder | null;
  /** Word rarity for the "nothing found" decision of library-less questions (null: never refuse). */
  rarity: WordRarity | null;
  access: AccessPolicy;
  /** Rule 8: a missing version of a library added from Git is queued for indexing when its repository has that tag. */
  versions: Pick<VersionRequests, 'request'>;
  log: Logger;
}

/** Fault injection for tests (test/search-parameters.test.ts): a stage of the pipeline replaced; retrieval then runs in the request thread. */
export interface SearchOverrides {
  retrieve?: LibraryRetrieval;
  rerank?: GlobalRerank;
}

/** Language names a caller may pass as `language`, mapped to codeLanguage values the reranker compares. */
const LANGUAGE_ALIASES: Record<string, string[]> = {
  typescript: ['typescript', 'ts', 'tsx'],
  ts: ['typescript', 'ts', 'tsx'],
  javascript: ['javascript', 'js', 'jsx', 'mjs', 'cjs'],
  js: ['javascript', 'js', 'jsx', 'mjs', 'cjs'],
  python: ['python', 'py'],
  py: ['python', 'py'],
  shell: ['bash', 'sh', 'shell', 'console'],
  bash: ['bash', 'sh', 'shell', 'console'],
  go: ['go', 'golang'],
  golang: ['go', 'golang'],
  rust: ['rust', 'rs'],
};

/** What a search's selection decided, read in its snapshot: the targets, whether they were inferred, the question as the versions spell it. */
interface Plan {
  targets: SearchTarget[];
  inferred: boolean;
  spelled: PreparedQuery;
}

/** One search's question as selection and retrieval take it: the request, its analysis, the caller, the prepared query, the version asked for. */
interface Asking {
  req: SearchRequest;
  asked: SelectionRequest;
  principal: Reader;
  q: PreparedQuery;
  versionParam: string | undefined;
}

/**
 * GET /api/v3/search: selects up to four libraries, resolves the requested version per library,
 * runs the pipeline's per-version stage for each in parallel (pipeline.ts), then its ranking and
 * shaping on the merged list: one bounded answer. One library failing (or the ranking) still
 * answers, marked partial.
 */
export class MultiLibrarySearch implements SearchService {
  private readonly catalogs = new WeakMap<ServingStore, { catalog: Catalog; selector: LibrarySelector; access: AccessPolicy }>();

  constructor(
    /** Read on every request, so an access policy swapped into the services later is used. */
    private readonly depsOf: () => SearchDeps,
    private readonly overrides: SearchOverrides = {},
    /** Worker threads for the candidate retrieval (the pool of /api/v2/context); null: retrieve in the request thread. */
    private readonly poolOf: () => RetrievalPool | null = () => null,
  ) {}

  /**
   * The selector over the current store and access policy (catalogue cached per store). Its methods
   * without `Step` read at once: SQLite's only; on PostgreSQL, select with withSelector.
   */
  selector(): LibrarySelector {
    return this.selection(this.depsOf()).selector;
  }

  private selection(d: SearchDeps): { catalog: Catalog; selector: LibrarySelector } {
    let c = this.catalogs.get(d.store);
    if (!c || c.access !== d.access) {
      const reads = searchReadsOf(d.store);
      const catalog = c?.catalog ?? new Catalog(reads);
      c = { catalog, selector: new LibrarySelector(catalog, reads, d.access, d.log), access: d.access };
      this.catalogs.set(d.store, c);
    }
    return c;
  }

  /**
   * Runs a step of selection (GET /api/v2/libs/search). On SQLite at once, over the catalogue that
   * refreshes itself; on PostgreSQL over the catalogue as the request reads it (onPg).
   */
  async withSelector<T>(fn: (selector: LibrarySelector) => Step<T>): Promise<T> {
    const d = this.depsOf();
    if (d.store.backend === 'sqlite') return runSync(fn(this.selector()));
    return this.onPg(d.store, d, pgRequestReads(d.store), (selector) => fn(selector), false);
  }

  /**
   * `fn` on PostgreSQL with a selector over the catalogue view it reads first: the node's mirror,
   * rebuilt when another node (or this one) changed the catalogue's stamp. In one read snapshot
   * when `inSnapshot` (a search's retrieval); else each statement on its own, as SQLite's library
   * search reads (a view read across a change is held under the older stamp and rebuilt at the next request).
   * With `heldView`, over the view this node last read, its stamp not read again (once one was read).
   */
  private onPg<T>(
    store: PgStore,
    d: SearchDeps,
    reads: SearchReads,
    fn: (selector: LibrarySelector, view: CatalogView) => Step<T> | Promise<T>,
    inSnapshot: boolean,
    heldView = false,
  ): Promise<T> {
    const { catalog } = this.selection(d);
    const run = async () => {
      const view = (heldView ? catalog.held() : null) ?? (await runAsync(catalog.viewStep()));
      const out = fn(new LibrarySelector(view, reads, d.access, d.log), view);
      return isStep(out) ? runAsync(out) : out;
    };
    return inSnapshot ? store.search.snapshot(run) : run();
  }

  async search(req: SearchRequest, principal: Reader): Promise<Rendered<SearchContextResponse>> {
    const d = this.depsOf();
    const r = await this.rankedSearch(req, principal);
    const verdict = await this.verdict(r);
    if (verdict?.nothingFound) {
      d.log.debug({ query: req.query.slice(0, 200), unknown: verdict.unknown, coverage: verdict.coverage, reason: verdict.reason }, 'search: nothing found');
      throw new ApiError(
        'no_documentation_found',
        verdict.reason === 'no-words'
          ? 'Nothing in the indexed documentation answers this question: it has no word to search for, only common words such as "how" or "the". Ask about a topic, or name a library with the library parameter.'
          : 'Nothing in the indexed documentation answers this question: its main words are missing from every library or are not found together. Name a library with the library parameter to search it anyway.',
      );
    }
    return searchAnswer(r, principal, d);
  }

  /**
   * The search up to its global ranking: the question prepared, the libraries selected and their
   * versions resolved, each one's candidates (the pipeline's per-version stage), merged and ranked
   * (the fused order when the ranking fails). The evaluation reads verdicts through it (test/eval/verdicts.ts).
   */
  async rankedSearch(req: SearchRequest, principal: Reader): Promise<RankedSearch> {
    const d = this.depsOf();
    // The question is analysed once, for selection and retrieval alike.
    const asked: SelectionRequest = { question: new Question(req.query), libraries: req.libraries, version: req.version };
    const question = await this.prepareQuestion(req, asked, principal, d);
    const q = question.q;
    let failed = question.failed;
    const versionParam = req.version && !/^latest$/i.test(req.version) ? req.version : undefined;
    const store = d.store;
    // On PostgreSQL the request's reads also serve the stages after retrieval (they remember each
    // version's row and each word's count, and take the model times from the request's catalogue view).
    const pg = store.backend === 'sqlite' ? null : { store, reads: wordsReadOnce(pgRequestReads(store)) };
    const asking: Asking = { req, asked, principal, q, versionParam };
    const { targets, inferred, settled, spelled, view } = pg
      ? await this.retrieveOnPg(pg.store, pg.reads, asking, d)
      : { ...(await this.retrieveTargets(sqliteOnly(store), asking, d)), view: null };
    const reads = pg && view ? modelTimesOf(pg.reads, view) : null;
    this.queueMissingVersions(targets, principal);
    const { merged, partial } = this.mergeLists(targets, settled, d);
    if (partial) failed = true;
    if (merged.length === 0) {
      if (failed) throw new ApiError('search_failed', 'The documentation search could not be completed for every library; see the server log.');
      throw new ApiError('no_documentation_found', `No documentation in ${targets.map((t) => t.label).join(', ')} matched the question.`);
    }
    const r = await this.rankMerged(spelled, merged, d, reads);
    return { q, targets, ranked: r.ranked, inferred, versionParam, failed: failed || r.failed, reads };
  }

  /**
   * The "nothing found" decision of a search whose libraries were picked from the question's words
   * (null otherwise, or without the word table), on the words as asked: a word no document holds
   * counts as unknown even when it reads like one they do.
   */
  async verdict(r: RankedSearch): Promise<Answerability | null> {
    const d = this.depsOf();
    if (!r.inferred || !d.rarity) return null;
    const store = d.store;
    if (store.backend === 'sqlite') return answerability(r.q, r.ranked, (words) => new Set(store.probe.documentFrequencies(words).keys()), d.rarity);
    // The request's reads: the words selection's probe counted in the snapshot are not read again.
    const reads = r.reads ?? pgRequestReads(store);
    return runAsync(answerabilityStep(r.q, r.ranked, async (words) => new Set((await reads.documentFrequencies(words)).keys()), d.rarity));
  }

  /** The question prepared for retrieval (lexical only when the embedder is down: failed), with the language's aliases. */
  private async prepareQuestion(req: SearchRequest, asked: SelectionRequest, principal: Reader, d: SearchDeps): Promise<{ q: PreparedQuery; failed: boolean }> {
    // A short question asking only what its one library is ("what is hono") is searched with the library's description.
    // On PostgreSQL over the catalogue this node last read: its stamp is read again in the search's
    // snapshot, which decides what is served; a library changed through another node just now is
    // searched without (or with its former) description once, until a request reads the new stamp.
    const store = d.store;
    const sole = !mayAskOverview(req.query)
      ? null
      : store.backend === 'sqlite'
        ? store.search.snapshot(() => this.selector().soleNamed(asked, principal))
        : await this.onPg(store, d, pgRequestReads(store), (selector) => selector.soleNamedStep(asked, principal), false, true);
    const prepared = await prepareQueryOrLexical((sole && overviewText(req.query, sole.library, sole.keys)) ?? asked.question, d.embedder);
    // Embedder down: lexical only, and the answer says it is partial.
    if (prepared.error) d.log.warn({ err: prepared.error.message }, 'search: query embedding failed; lexical retrieval only');
    let q = prepared.q;
    if (req.language) {
      const l = req.language.toLowerCase();
      q = { ...q, languages: [...new Set([...q.languages, ...(LANGUAGE_ALIASES[l] ?? [l])])] };
    }
    return { q, failed: prepared.error !== null };
  }

  /**
   * Selects the libraries, resolves their versions and retrieves each one's candidates (on a
   * worker thread when there is a pool). Returns the targets, one pending list per target and the
   * question as retrieved: its misspelled words read as the chosen versions spell them.
   */
  private async retrieveTargets(store: Store, asking: Asking, d: SearchDeps): Promise<Plan & { settled: PromiseSettledResult<Candidate[]>[] }> {
    const { asked, principal } = asking;
    // Selection, version resolution and the retrieval queries run in one read snapshot, so a
    // version swapped in by an import meanwhile is never half-seen (the embedding came first: it is async).
    // With worker threads, the request thread only selects and resolves; the worker retrieves in its
    // own snapshot after checking that every resolved version is still served (else: in this thread).
    const pool = this.overrides.retrieve ? null : this.poolOf();
    // A library-less question that names no library needs the whole-index probe. Under load it runs
    // on a worker, so that the request thread serves others meanwhile; idle, the request thread's
    // connection (larger cache, mapped) answers it sooner.
    let probed: VersionProbe[] | undefined;
    const probeMatch = pool && pool.pending > 0 ? this.selector().probeMatchFor(asked, principal) : null;
    if (pool && probeMatch) {
      try {
        probed = await pool.topVersions(probeMatch, TUNING.selection.probeRows);
      } catch (err) {
        d.log.warn({ err: (err as Error).message }, 'search: library probe on a worker failed; probing in the request thread');
      }
    }
    const plan = (inThread: boolean) =>
      store.search.snapshot(() => {
        const p = runSync(this.planStep(this.selector(), sqliteSearchReads(store), asking, probed, d));
        if (!inThread) return { ...p, pending: null };
        const limits = candidateLimits(p.targets.length);
        const retrieve = this.overrides.retrieve ?? (async (t: SearchTarget, pq: PreparedQuery) => versionCandidates(store, pq, versionTarget(t), limits));
        return { ...p, pending: p.targets.map((t) => retrieve(t, p.spelled)) };
      });
    let { targets, inferred, spelled, pending } = plan(pool === null);
    if (pending === null) {
      let lists: Candidate[][] | 'stale' | null = null;
      try {
        lists = await pool!.search(targets.map(versionTarget), spelled);
      } catch (err) {
        d.log.warn({ err: (err as Error).message }, 'search: retrieval worker failed; retrieving in the request thread');
      }
      if (lists !== null && lists !== 'stale') pending = lists.map((l) => Promise.resolve(l));
      else ({ targets, inferred, spelled, pending } = plan(true));
    }
    return { targets, inferred, spelled, settled: await Promise.allSettled(pending!) };
  }

  /**
   * retrieveTargets on PostgreSQL: selection, version resolution and every library's candidates in
   * one read snapshot, on the request thread (the database does the heavy reading; no worker threads).
   */
  private retrieveOnPg(
    store: PgStore,
    reads: SearchReads,
    asking: Asking,
    d: SearchDeps,
  ): Promise<Plan & { settled: PromiseSettledResult<Candidate[]>[]; view: CatalogView }> {
    return this.onPg(
      store,
      d,
      reads,
      async (selector, view) => {
        const p = await runAsync(this.planStep(selector, reads, asking, undefined, d));
        const limits = candidateLimits(p.targets.length);
        const retrieve = this.overrides.retrieve ?? ((t: SearchTarget, pq: PreparedQuery) => versionCandidatesAsync(reads, pq, versionTarget(t), limits));
        // Every library's version row and postings in two statements, not two per library.
        if (p.targets.length > 1)
          await reads.prefetch?.(
            p.targets.map((t) => t.version.id),
            p.spelled.termForms.flat(),
          );
        // Settled inside the snapshot, whose connection is given back when this returns.
        return { ...p, settled: await settledInTurn(p.targets, (t) => retrieve(t, p.spelled)), view };
      },
      true,
    );
  }

  /** Selection, version resolution and spelling, read in the caller's snapshot (both backends). */
  private *planStep(selector: LibrarySelector, reads: SearchReads, asking: Asking, probed: VersionProbe[] | undefined, d: SearchDeps): Step<Plan> {
    const { req, asked, principal, q, versionParam } = asking;
    const selection = yield* selector.selectStep(asked, principal, probed);
    if (selection.choices.length === 0) {
      throw new ApiError(
        'no_documentation_found',
        req.libraries.length
          ? `No indexed library matches ${req.libraries.map((l) => `"${l}"`).join(', ')}. Look libraries up with /api/v2/libs/search.`
          : 'No indexed library matches the question. Name a library with the library parameter.',
      );
    }
    const targets = selection.choices.map((c) => searchTarget(c));
    if (selection.versionIgnored && versionParam) {
      // Library-less question naming several (or no) products: the version cannot apply; each library says so.
      for (const t of targets) Object.assign(t, { requested: versionParam, served: null, status: 'unverified' as const, versionIgnored: true });
    }
    // Only a question that names no library, answered from libraries its words pointed to, may be "nothing found".
    const inferred = req.libraries.length === 0 && selection.named === 0;
    const { q: spelled, corrections } = yield* correctSpellingStep(
      q,
      reads,
      d.rarity,
      targets.map((t) => t.version.id),
    );
    if (corrections.length) d.log.debug({ corrections }, 'search: misspelled words read as the documents spell them');
    return { targets, inferred, spelled };
  }

  /** The libraries' candidates in one list (each library's best when several); partial when one library failed, an error when all did. */
  private mergeLists(targets: SearchTarget[], settled: PromiseSettledResult<Candidate[]>[], d: SearchDeps): { merged: Candidate[]; partial: boolean } {
    const several = targets.length > 1;
    const merged: Candidate[] = [];
    let failures = 0;
    settled.forEach((r, i) => {
      const t = targets[i]!;
      if (r.status === 'fulfilled') {
        const best = several ? [...r.value].sort(byScore).slice(0, TUNING.multi.perLibrary) : r.value;
        for (const c of best) merged.push({ ...c, libraryId: t.label });
      } else {
        failures++;
        d.log.warn({ libraryId: t.label, err: (r.reason as Error)?.message }, 'search: retrieval failed for one library');
      }
    });
    if (failures === targets.length) throw new ApiError('search_failed', 'The documentation search could not be completed; see the server log.');
    return { merged, partial: failures > 0 };
  }

  /** The global ranking of the question as retrieved; the fused order when it fails. */
  private async rankMerged(
    spelled: PreparedQuery,
    merged: Candidate[],
    d: SearchDeps,
    reads: SearchReads | null,
  ): Promise<{ ranked: Candidate[]; failed: boolean }> {
    const store = d.store;
    try {
      if (this.overrides.rerank) return { ranked: this.overrides.rerank(spelled, merged), failed: false };
      const ranked = reads ? await rankCandidatesAsync(reads, spelled, merged) : rankCandidates(sqliteOnly(store), spelled, merged);
      return { ranked, failed: false };
    } catch (err) {
      d.log.warn({ err: (err as Error).message }, 'search: reranker failed; fused order served');
      return { ranked: merged.map((c) => ({ ...c, score: c.fused })).sort(byScore), failed: true };
    }
  }

  /** Rule 8: a requested version a repository library lacks (or has only as a prerelease) is asked for, once (version-fetch.ts). */
  private queueMissingVersions(targets: SearchTarget[], principal: Reader): void {
    const d = this.depsOf();
    for (const t of targets) {
      if (t.requested === null || t.status === 'verified' || t.entry.library.sourceType !== 'repo') continue;
      if (t.versionIgnored) continue;
      d.versions.request(t.entry.library, t.requested, principalOf(principal)?.memberId ?? null);
    }
  }
}
