import fs from 'node:fs';
import type { Store } from '../store/index.ts';
import { pgRequestReads, pgSearchReads } from '../store/pg/version-reads.ts';
import { sqliteSearchReads, type SearchReads } from '../store/version-reads.ts';
import type { Embedder } from '../embed/types.ts';
import { searchWorkerCount, workerVectorCacheBytes, type Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { VersionRequests } from './version-fetch.ts';
import { principalOf, type Library, type Reader } from '../../lib/model.ts';
import { parseLibraryId } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AccessPolicy, ContextRequest, ContextResponse, ContextRules, ContextService, Rendered } from './answer-types.ts';
import { prepareQueryOrLexical, type PreparedQuery } from './query.ts';
import { correctSpelling, correctSpellingStep, type Correction } from './spelling.ts';
import { overviewText } from './overview.ts';
import type { WordRarity } from './word-rarity.ts';
import type { Candidate } from './retrieve.ts';
import { RetrievalPool } from './retrieval-pool.ts';
import { answerForVersion, answerStep, type VersionTarget } from './pipeline.ts';
import { runAsync, runSync, wait, type Step } from './read-steps.ts';
import type { ServingStore } from './serving.ts';
import type { PgStore } from '../store/pg/index.ts';
import { chooseVersion, versionHeaders, type VersionChoice } from './versions.ts';
import { flattenRules, lazyRendered, renderRulesText, renderText, TEXT_SEPARATOR, toContextJson } from './render.ts';
import { gatherSources, gatherSourcesStep, prepareResearch, synthesize, type ResearchDeps } from './research.ts';
import { isoWeek, nextWeekStart } from '../../lib/week.ts';

export interface ContextDeps {
  store: ServingStore;
  /** For rule 8 of /v3/search: a missing version of a library added from Git is queued for indexing when its repository has that tag. */
  versions?: Pick<VersionRequests, 'request'>;
  embedder: Embedder | null;
  /** Word rarity in English (the builtin word table): tells a typo from a word; null: nothing is corrected. */
  rarity: WordRarity | null;
  access: AccessPolicy;
  config: Config;
  log: Logger;
}

/** A library and the version of it that answers a request. */
export interface ResolvedLibrary {
  library: Library;
  choice: VersionChoice;
}

/**
 * Resolves a context libraryId (`/owner/repo`, `/owner/repo/tag`, `/owner/repo@tag`) to a visible
 * library and a served version. Malformed: 400 invalid_library_id. Unknown, not visible to the
 * caller, or with nothing indexed: 404 library_not_found.
 */
export function resolveLibrary(store: Store, access: AccessPolicy, principal: Reader, raw: string): ResolvedLibrary {
  return runSync(resolveStep(sqliteSearchReads(store), access, principal, raw));
}

/** resolveLibrary over either backend's reads. */
export function* resolveStep(
  reads: Pick<SearchReads, 'libraries' | 'libraryWithVersions'>,
  access: AccessPolicy,
  principal: Reader,
  raw: string,
): Step<ResolvedLibrary> {
  const parsed = parseLibraryId(raw);
  if (!parsed) throw new ApiError('invalid_library_id', `"${raw}" is not a library ID; use /owner/repo, /owner/repo/version or /owner/repo@version.`);
  let found = yield* wait(reads.libraryWithVersions(parsed.id));
  if (!found) {
    // IDs are case-insensitive for people typing them (/Fastify/Fastify).
    const lower = parsed.id.toLowerCase();
    const id = (yield* wait(reads.libraries())).find((l) => l.id.toLowerCase() === lower)?.id;
    if (id !== undefined) found = yield* wait(reads.libraryWithVersions(id));
  }
  const notFound = () => new ApiError('library_not_found', `Library ${parsed.id} was not found. Look it up with /api/v2/libs/search first.`);
  if (!found || !access.canSee(principal, found.library)) throw notFound();
  const { library, versions } = found;
  const choice = chooseVersion(versions, parsed.tag, library.branch);
  if (!choice) throw notFound();
  return { library, choice };
}

/** What /api/v2/context answers, before it is rendered. */
interface ContextAnswer {
  resolved: ResolvedLibrary;
  items: Candidate[];
  corrections: Correction[];
  /** Whether the served version's vectors are complete; null without an embedder (no header). */
  vectorsReady: boolean | null;
  /** Why the question has no vector (the embedder failed): it was searched by its words alone. */
  error: Error | null;
}

/**
 * The context answer read in one snapshot on PostgreSQL: the version resolved (its first read, so a
 * swap on any node is seen), the question (embedded meanwhile: `asked`, unless it only asks what the
 * library is, then its description), its misspellings read as the version spells them, the pipeline,
 * the vectors' state.
 */
function* contextStep(
  reads: SearchReads,
  deps: Pick<ContextDeps, 'access' | 'rarity' | 'embedder'>,
  principal: Reader,
  req: ContextRequest,
  asked: Promise<{ q: PreparedQuery; error: Error | null }>,
): Step<ContextAnswer> {
  const resolved = yield* resolveStep(reads, deps.access, principal, req.libraryId);
  const overview = overviewText(req.query, resolved.library);
  const { q, error } = yield* wait(overview === null ? asked : prepareQueryOrLexical(overview, deps.embedder));
  const { q: spelled, corrections } = yield* correctSpellingStep(q, reads, deps.rarity, [resolved.choice.version.id]);
  const items = yield* answerStep(reads, spelled, targetOf(resolved), { fast: req.fast });
  const vectorsReady = deps.embedder ? yield* wait(reads.vectorsReady(resolved.choice.version.id)) : null;
  return { resolved, items, corrections, vectorsReady, error };
}

/** The version a resolved library answers from, as the pipeline takes it. */
function targetOf(r: ResolvedLibrary): VersionTarget {
  return { versionId: r.choice.version.id, libraryId: r.library.id, dynamicVersionId: r.choice.version.dynamicVersionId };
}

/** The rules of one library for a caller, in the ContextResponse shape. */
export function contextRules(access: AccessPolicy, principal: Reader, libraryId: string): ContextRules {
  const r = access.rules(principal, [libraryId]);
  const lib = r.libraries.find((l) => l.libraryId === libraryId);
  return { global: r.global, libraryOwn: lib?.libraryOwn ?? [], libraryTeam: lib?.libraryTeam ?? [] };
}

/** Headers saying which library and version answered (every answer states what it served). */
function servedHeaders(r: ResolvedLibrary): Record<string, string> {
  return { 'X-Stacks-Library': r.library.id, 'X-Stacks-Library-Version': r.choice.version.tag || 'current', ...versionHeaders(r.choice.status) };
}

/** GET /api/v2/context: ranked snippets of one library version, or one synthesized answer in research mode. */
export class StoreContextService implements ContextService {
  private pool: RetrievalPool | null | undefined;

  constructor(
    /** Read on every request, so a policy or embedder swapped into the services later is used. */
    private readonly depsOf: () => ContextDeps,
    private readonly now: () => Date = () => new Date(),
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  private get deps(): ContextDeps {
    return this.depsOf();
  }

  async query(req: ContextRequest, principal: Reader): Promise<Rendered<ContextResponse>> {
    const { store, access } = this.deps;
    if (req.researchMode) {
      // Fail fast on a bad ID and check the key before the research quota is taken.
      if (store.backend === 'sqlite') resolveLibrary(store, access, principal, req.libraryId);
      else await runAsync(resolveStep(pgSearchReads(store), access, principal, req.libraryId));
      return this.research(req, principal);
    }
    const { resolved, items, corrections, vectorsReady, error } =
      store.backend === 'sqlite' ? await this.answerOnSqlite(store, req, principal) : await this.answerOnPostgres(store, req, principal);
    if (error) this.deps.log.warn({ err: error.message }, 'context: query embedding failed; lexical retrieval only');
    if (corrections.length) this.deps.log.debug({ corrections }, 'context: misspelled words read as the documents spell them');
    const rules = contextRules(access, principal, resolved.library.id);
    this.queueMissingVersion(resolved, principal);
    const text = () => {
      const ruleLines = flattenRules(rules);
      return items.length
        ? renderText(items, { rules: ruleLines })
        : [...(ruleLines.length ? [renderRulesText(ruleLines)] : []), `No documentation in ${resolved.library.id} matched the question.`].join(TEXT_SEPARATOR);
    };
    const headers = servedHeaders(resolved);
    // A version whose vectors the embed job has not completed was searched by its words alone.
    if (vectorsReady !== null) headers['X-Stacks-Vectors'] = vectorsReady ? 'ready' : 'pending';
    // As /api/v3/search does: the failure wins the reason, the version header stays.
    if (error) Object.assign(headers, { 'X-Stacks-Search-Status': 'partial', 'X-Stacks-Search-Reason': 'partialSearchFailure' });
    return lazyRendered(() => toContextJson(items, rules), text, headers);
  }

  /**
   * SQLite's answer: the library resolved first (a bad ID fails before any work), the question
   * embedded, misspellings read as that version spells them, then the pipeline on a worker thread or
   * in this one, where the version is resolved again inside the read snapshot: a re-import swapping
   * it during the (async) embedding cannot leave us reading a version that no longer exists.
   */
  private async answerOnSqlite(store: Store, req: ContextRequest, principal: Reader): Promise<ContextAnswer> {
    const { access, rarity, embedder } = this.deps;
    const first = resolveLibrary(store, access, principal, req.libraryId);
    // A question asking only what the library is ("pino", "what is hono") is searched with its description.
    const { q: prepared, error } = await prepareQueryOrLexical(overviewText(req.query, first.library) ?? req.query, embedder);
    const { q, corrections } = correctSpelling(prepared, store.terms, rarity, [first.choice.version.id]);
    const { resolved, items } =
      (await this.inWorker(store, req, principal, q, first)) ??
      store.search.snapshot(() => {
        const r = resolveLibrary(store, access, principal, req.libraryId);
        return { resolved: r, items: answerForVersion(store, q, targetOf(r), { fast: req.fast }) };
      });
    return { resolved, items, corrections, vectorsReady: embedder ? store.search.vectorsReady(resolved.choice.version.id) : null, error };
  }

  /**
   * PostgreSQL's answer, in one snapshot (contextStep). The question is embedded while the snapshot
   * opens and resolves the library, rather than after a resolution of its own: on PostgreSQL each
   * read is a round trip.
   */
  private async answerOnPostgres(store: PgStore, req: ContextRequest, principal: Reader): Promise<ContextAnswer> {
    const asked = prepareQueryOrLexical(req.query, this.deps.embedder);
    // Awaited in the step unless the library is missing or hidden; then its outcome is of no interest.
    asked.catch(() => undefined);
    return store.search.snapshot(() => runAsync(contextStep(pgRequestReads(store), this.deps, principal, req, asked)));
  }

  /**
   * The worker pool, created on first use: config.searchWorkers threads (unset: 2, or none in dev mode); none for an in-memory
   * database, nor on PostgreSQL (the request thread awaits the database there, which does the heavy reading).
   * Shared with /api/v3/search (services.ts hands it to MultiLibrarySearch).
   */
  retrievalPool(): RetrievalPool | null {
    return this.poolOf();
  }

  /** Live workers and requests in flight, without starting a pool that no search has needed yet (for /metrics). */
  poolStats(): { live: number; inFlight: number } {
    const pool = this.pool ?? null;
    return { live: pool?.size ?? 0, inFlight: pool?.pending ?? 0 };
  }

  private poolOf(): RetrievalPool | null {
    if (this.pool !== undefined) return this.pool;
    const { config, store } = this.deps;
    if (store.backend !== 'sqlite') return (this.pool = null);
    const size = searchWorkerCount(config);
    const file = store.file;
    const lost = (err: Error) => this.deps.log.error({ err: err.message }, 'a retrieval worker stopped; its share of the searches runs in the request thread');
    this.pool = size > 0 && file && file !== ':memory:' && fs.existsSync(file) ? new RetrievalPool(file, size, workerVectorCacheBytes(config), lost) : null;
    return this.pool;
  }

  /**
   * Runs the retrieval on a worker thread. The version resolved before (`first`) is checked by the
   * worker inside its read snapshot; when a re-import swapped it out in between, resolve again.
   * Returns null (answer in this thread) when there is no pool or the pool failed.
   */
  private async inWorker(
    store: Store,
    req: ContextRequest,
    principal: Reader,
    q: PreparedQuery,
    first: ResolvedLibrary,
  ): Promise<{ resolved: ResolvedLibrary; items: Candidate[] } | null> {
    const pool = this.poolOf();
    if (!pool) return null;
    for (let attempt = 0; attempt < 3; attempt++) {
      const resolved = attempt === 0 ? first : resolveLibrary(store, this.deps.access, principal, req.libraryId);
      let r: Candidate[] | 'stale';
      try {
        r = await pool.answer(targetOf(resolved), q, { fast: req.fast });
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message }, 'context: retrieval worker failed; answering in the request thread');
        return null;
      }
      if (r !== 'stale') return { resolved, items: r };
    }
    return null;
  }

  /** Stops the worker threads (tests and shutdown; idle workers never keep the process alive). */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.close();
  }

  /** As /v3/search does (its rule 8): a requested version a repository library lacks is asked for, once (version-fetch.ts). */
  private queueMissingVersion(r: ResolvedLibrary, principal: Reader): void {
    const requested = r.choice.requested;
    if (!this.deps.versions || requested === null || r.choice.status === 'verified' || r.library.sourceType !== 'repo') return;
    this.deps.versions.request(r.library, requested, principalOf(principal)?.memberId ?? null);
  }

  private async research(req: ContextRequest, principal: Reader): Promise<Rendered<ContextResponse>> {
    // The research quota is a member's: anonymous callers and the operator have none.
    const member = principalOf(principal);
    if (!member) throw new ApiError('invalid_api_key', 'researchMode=true requires an API key: send Authorization: Bearer <key>.');
    const now = this.now();
    const week = isoWeek(now);
    const quota = this.deps.config.researchWeeklyQuota;
    const taken = await this.deps.store.research.take(member.memberId, week, quota);
    if (!taken.taken) {
      const reset = nextWeekStart(now);
      throw new ApiError('research_quota_exceeded', `The weekly research-mode quota of ${quota} requests is used up; it resets on ${reset.toISOString()}.`, {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000))) },
      });
    }
    try {
      const { store, access, embedder } = this.deps;
      const deps: ResearchDeps = { embedder, config: this.deps.config, log: this.deps.log, fetch: this.fetchImpl };
      const queries = await prepareResearch(req.query, embedder);
      const { resolved, sources } =
        store.backend === 'sqlite'
          ? store.search.snapshot(() => {
              const r = resolveLibrary(store, access, principal, req.libraryId);
              return { resolved: r, sources: gatherSources(store, r.choice.version.id, r.library.id, queries) };
            })
          : await store.search.snapshot(() => runAsync(researchStep(pgRequestReads(store), access, principal, req.libraryId, queries)));
      const rules = contextRules(access, principal, resolved.library.id);
      this.queueMissingVersion(resolved, principal);
      const result = await synthesize(deps, resolved.choice.version.id, resolved.library.id, req.query, sources);
      const items = [{ snippet: result.snippet, libraryId: resolved.library.id }];
      const headers: Record<string, string> = {
        ...servedHeaders(resolved),
        'X-Stacks-Research-Used': String(taken.used),
        'X-Stacks-Research-Limit': String(quota),
      };
      if (result.fallback && !headers['X-Stacks-Search-Status'])
        Object.assign(headers, { 'X-Stacks-Search-Status': 'partial', 'X-Stacks-Search-Reason': 'partialSearchFailure' });
      return { json: toContextJson(items, rules), text: renderText(items, { rules: flattenRules(rules) }), headers };
    } catch (err) {
      await this.deps.store.research.refund(member.memberId, week);
      throw err;
    }
  }
}

/** Research mode's sources on PostgreSQL, in one snapshot with the version they come from. */
function* researchStep(
  reads: SearchReads,
  access: AccessPolicy,
  principal: Reader,
  libraryId: string,
  queries: PreparedQuery[],
): Step<{ resolved: ResolvedLibrary; sources: Candidate[] }> {
  const resolved = yield* resolveStep(reads, access, principal, libraryId);
  return { resolved, sources: yield* gatherSourcesStep(reads, resolved.choice.version.id, resolved.library.id, queries) };
}
