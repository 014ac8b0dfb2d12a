import path from 'node:path';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import type { Store } from './store/index.ts';
import type { PgStore } from './store/pg/index.ts';
import { declaredSources, gettingStarted, operationsAids, refuseFallbackOnSharedVectors, stateOf } from './services-aids.ts';
/** Whether a data dir holds a Stacks database (the CLI refuses a mistyped --data-dir with it). */
export { holdsStacksDatabase } from './store/index.ts';
import { LicenseService, loadVerifyKeys } from './license/license.ts';
import { nodeState } from './system/node-state.ts';
import { KeyService } from './auth/keys.ts';
import { JobQueue } from './jobs/queue.ts';
import { LibraryWriter } from './ingest/writer.ts';
import { backfillSearchIndex } from './ingest/search-backfill.ts';
import { ImportService } from './ingest/import-service.ts';
import { importSweepTask, registerImportJob } from './ingest/import-job.ts';
import type { Embedder } from './embed/types.ts';
import { createEmbedder, loadBuiltin } from './embed/index.ts';
import { BuiltinEmbedder } from './embed/builtin.ts';
import type { WordRarity } from './search/word-rarity.ts';
import { lastReembedUnfinished, registerReembedJob, scheduleReembed } from './embed/reembed-job.ts';
import type { AccessPolicy, ContextService, LibrarySearchService, SearchService } from './search/answer-types.ts';
import { StoreContextService } from './search/context-service.ts';
import type { ServingStore } from './search/serving.ts';
import { MultiLibrarySearch, type SearchOverrides } from './search/search-service.ts';
import { StoreLibrarySearch } from './search/library-search.ts';
import { TeamService } from './teams/index.ts';
import { AuditLog, auditPruneTask } from './audit/log.ts';
import { systemReport, teamspaceReport } from './system/report.ts';
import type { UserService } from './auth/users.ts';
import type { SessionService } from './auth/sessions.ts';
import type { SignInService } from './auth/sign-in.ts';
import type { OidcSignIn } from './auth/oidc.ts';
import { LibraryAccessService } from './teams/library-access.ts';
import { postgresLearner, queueSearchModel, registerSearchModelJob, scheduleMissingModels, sqliteLearner } from './search/model-job.ts';
import { registerVersionFetch, VersionRequests } from './search/version-fetch.ts';
import { walKeeperTask } from './system/wal-task.ts';
import { ServingActivity } from './system/serving-activity.ts';
import { SourceService } from './sources/service.ts';
import { CrawlService } from './sources/website/service.ts';
import { createOperations, type Operations } from './operations/index.ts';
import { sourceRefusal } from './teams/policy.ts';
import { bundleMeta } from './ingest/bundle.ts';
import { registerCrawlJob } from './sources/website/job.ts';
import { queueOwnDocs, registerOwnDocsJob } from './sources/own-docs.ts';
import { startCrawlSchedules } from './sources/website/schedule.ts';
import { runOnceAcrossNodes } from './jobs/cron.ts';
import { GitSourceService } from './sources/git/service.ts';
import { GitCredentials, parseCredentialsKey } from './sources/git/credentials.ts';
import { GIT_JOB, runGitJob, type GitJobDeps, type GitJobPayload } from './sources/git/job.ts';
import { APP_ROOT } from './version.ts';
import { Metrics } from './metrics/metrics.ts';
import { DeclaredSources } from './sources/declared/reconcile.ts';
import { auditReconcile, startDeclaredSources } from './sources/declared/schedule.ts';
import type { InvitationService } from './auth/invitations.ts';
import { createPeople } from './auth/people.ts';
import { PublicUrl } from './system/public-url.ts';
import { auditScheduledBackup, startBackupSchedule } from './backup/schedule.ts';
import type { BackupService } from './backup/service.ts';
import type { ExportService } from './ingest/export.ts';
import { healthReport } from './system/health.ts';

const ROOT_DIR = APP_ROOT;

/**
 * The composition root. createServices builds every service of the appliance once, each with
 * the dependencies it names as arguments, and registers the job kinds; startBackground starts the
 * periodic tasks. The HTTP app (server/http/app.ts), the MCP server, the CLI and the tests receive
 * the result; no service imports this module (the lint step checks it, see docs/architecture.md).
 */
export interface Services<S extends Store | PgStore = Store | PgStore> {
  config: Config;
  log: Logger;
  /** The state: SQLite's file in the data dir, or PostgreSQL when STACKS_DATABASE_URL is set (server/store/stores.ts). */
  store: S;
  embedder: Embedder | null;
  /** Word rarity in English, from the builtin word table (the "nothing found" decision); null when the table cannot load. */
  rarity: WordRarity | null;
  license: LicenseService;
  keys: KeyService;
  jobs: JobQueue;
  writer: LibraryWriter;
  /** Bundle import: staging of uploads and the queueing of 'import' jobs. */
  importer: ImportService;
  /** Teamspace library filters and rules (the teams service's policy), consulted by every library selection. */
  readonly access: AccessPolicy;
  /** Requests in flight, which background workers wait on (server/system/serving-activity.ts). */
  activity: ServingActivity;
  /** Teamspace policies, usage metering and limits, plans, rules, members (server/teams). */
  teams: TeamService;
  /** GET /api/v2/context (server/search/context-service.ts). */
  context: ContextService;
  /** GET /api/v3/search (server/search/search-service.ts). */
  search: SearchService;
  /** Search rule 8: versions asked for and not indexed, queued when a Git library's repository has the tag (server/search/version-fetch.ts). */
  versions: VersionRequests;
  /** GET /api/v2/libs/search (server/search/library-search.ts). */
  librarySearch: LibrarySearchService;
  /** Website crawls and re-crawl schedules (server/sources/website/service.ts). */
  crawler: CrawlService;
  /** OpenAPI, llms.txt and PDF/DOCX sources (server/sources/service.ts). */
  sources: SourceService;
  /** Git repositories: parse, refresh, tags on request (server/sources/git/). */
  git: GitSourceService;
  /** Encrypted credentials per Git host. */
  gitCredentials: GitCredentials;
  /** Append-only record of changes and refused authentications (server/audit). */
  audit: AuditLog;
  /** People who sign in to the console, their sessions, and how they sign in (server/auth). */
  users: UserService;
  sessions: SessionService;
  signIn: SignInService;
  /** Console invitations: one-time links to an account in a teamspace (server/auth/invitations.ts). */
  invitations: InvitationService;
  /** The address generated links and MCP configurations use: STACKS_PUBLIC_URL, else the console's setting (server/system/public-url.ts). */
  publicUrl: PublicUrl;
  /** Single sign-on, when STACKS_OIDC_ISSUER is set. */
  oidc: OidcSignIn | null;
  /** Signs the console's cookies (`<dataDir>/session.secret`). */
  cookieSecret: string;
  /** Backups of the whole instance (server/backup). */
  backups: BackupService;
  /** Libraries out as import bundles (server/ingest/export.ts). */
  exporter: ExportService;
  /** Prometheus metrics of this process (server/metrics). */
  metrics: Metrics;
  /** <dataDir>/sources.yaml, reconciled (server/sources/declared). */
  declared: DeclaredSources;
  /** Every operation of REST, MCP and the CLI: validated against its contract and admitted, then run (server/operations). */
  operations: Operations;
  startedAt: Date;
}

export interface ServiceOverrides {
  store?: Store | PgStore;
  embedder?: Embedder | null;
  license?: LicenseService;
  /** Fault injection for tests: replaces the search's per-library retrieval or its global rerank. */
  search?: SearchOverrides;
  /** Wraps the access policy when the services are built (tests, bench/accounting.ts switch policies through it). */
  access?: (real: AccessPolicy) => AccessPolicy;
}

/** `embedOnDemand`: a CLI command's services, whose sentence model starts only if the command embeds (createEmbedder). */
export async function createServices(
  config: Config,
  log: Logger,
  overrides: ServiceOverrides = {},
  options: { embedOnDemand?: boolean } = {},
): Promise<Services> {
  const store = overrides.store ?? (await stateOf(config, log));
  const activity = new ServingActivity();
  const embedder =
    overrides.embedder !== undefined ? overrides.embedder : await createEmbedder(config, log, { onDemand: options.embedOnDemand, activity: activity.buffer });
  if (embedder) await refuseFallbackOnSharedVectors(store, embedder);
  const vectorsReset = embedder !== null && (await store.vectors.ensure(embedder.id, embedder.dims));
  if (vectorsReset) log.info({ embedder: embedder.id }, 'vector table (re)created for the embedder');
  await backfillSearchIndex(store, log);
  const node = await nodeState(config, store);
  const license = overrides.license ?? new LicenseService(loadVerifyKeys(path.join(ROOT_DIR, 'licenses')), node.licenseHolder, config.dev);
  const keys = new KeyService(store);
  await keys.loadDefaultTeamspace();
  const jobs = new JobQueue(store, log, config.jobConcurrency);
  // Every version swapped in learns its ranking model in the background (server/search/model-job.ts).
  const writer = new LibraryWriter(store, embedder, undefined, async (versionId, libraryId) => {
    try {
      if (config.learnRanking) await queueSearchModel(jobs, versionId, libraryId);
      // The sentence model's vectors come after the version, from the embed job.
      if (embedder?.deferred) await scheduleReembed({ jobs, embedder, log }, 'new version');
    } catch (err) {
      log.error({ err, versionId, libraryId }, 'the jobs that follow a new version could not be queued');
    }
  });
  const importer = new ImportService(config, store, jobs, log, node.staged);
  const teams = new TeamService(store, keys, license, config);
  const rarity = await wordRarity(embedder, config, log);
  const access = overrides.access ? overrides.access(teams.access) : teams.access;
  // `git` is built below; the search side asks it only once a search runs.
  const searching = searchServices({ config, log, store, jobs, embedder, rarity, access }, overrides.search ?? {}, () => git);
  const crawler = new CrawlService({ store, jobs, config });
  const sources = new SourceService({ config, store, jobs, writer, log, staged: node.staged });
  const gitCredentials = new GitCredentials(store.git, config.gitCredentialsKey ? parseCredentialsKey(config.gitCredentialsKey) : null, () =>
    keys.defaultTeamspaceId(),
  );
  const git = new GitSourceService({ config, store, jobs, credentials: gitCredentials });
  const libraries = new LibraryAccessService(
    store,
    () => access,
    () => teams.defaultTeamspaceId(),
  );
  const audit = new AuditLog(store.audit, config.auditRetentionDays, (err) => log.error({ err }, 'could not write an audit entry'));
  const publicUrl = new PublicUrl(config.publicUrl, store.settings);
  const accounts = createPeople(config, log, store, teams, audit, publicUrl);
  const aids = operationsAids(config, log, store, jobs, teams, searching.context, () => access, node.staged);
  const declared = declaredSources(config, log, store, jobs, { crawler, sources, git }, license, () => keys.defaultTeamspaceId());
  const built: Omit<Services, 'operations'> = {
    config,
    log,
    store,
    embedder,
    rarity,
    license,
    keys,
    jobs,
    writer,
    importer,
    access,
    teams,
    crawler,
    sources,
    git,
    gitCredentials,
    audit,
    publicUrl,
    declared,
    activity,
    ...searching,
    ...accounts,
    ...aids,
    cookieSecret: node.cookieSecret,
    startedAt: new Date(),
  };
  const services: Services = { ...built, operations: operationsOf(built, libraries) };
  await registerJobKinds(services);
  await queueStartupWork(services, vectorsReset);
  return services;
}

/** The services of a SQLite instance, for what reads its file's stores synchronously (tests, benches, scripts); throws on PostgreSQL. */
export function onSqlite(s: Services): Services<Store> {
  if (s.store.backend !== 'sqlite') throw new Error('this needs the SQLite backend; the state is in PostgreSQL (STACKS_DATABASE_URL)');
  return s as Services<Store>;
}

/** The search side: versions asked for and not indexed, GET /api/v2/context, GET /api/v3/search, GET /api/v2/libs/search. */
function searchServices(
  d: { config: Config; log: Logger; store: ServingStore; jobs: JobQueue; embedder: Embedder | null; rarity: WordRarity | null; access: AccessPolicy },
  overrides: SearchOverrides,
  git: () => GitSourceService,
) {
  const { config, log, store, jobs, embedder, rarity, access } = d;
  // The tag lookups run only once a search asks.
  const versions = new VersionRequests({ jobs, log, tags: { isGit: (id) => git().isGit(id), tagFor: (id, version) => git().tagFor(id, version) } });
  const context = new StoreContextService(() => ({ store, versions, embedder, rarity, access, config, log }));
  // /api/v3/search retrieves on the context service's worker threads (one pool per process).
  const search = new MultiLibrarySearch(
    () => ({ store, embedder, rarity, access, versions, log }),
    overrides,
    () => context.retrievalPool(),
  );
  const librarySearch = new StoreLibrarySearch(() => ({ selection: search, access }));
  return { versions, context, search, librarySearch };
}

/** Every operation of REST, MCP and the CLI, given the services it runs on (server/operations). */
function operationsOf(s: Omit<Services, 'operations'>, libraries: LibraryAccessService): Operations {
  const { config, license, teams, jobs, store, keys, embedder, access } = s;
  return createOperations({
    config,
    license,
    teams,
    jobs,
    importer: s.importer,
    crawler: s.crawler,
    sources: s.sources,
    git: s.git,
    gitCredentials: s.gitCredentials,
    context: s.context,
    search: s.search,
    librarySearch: s.librarySearch,
    libraries,
    audit: s.audit,
    users: s.users,
    signIn: s.signIn,
    backups: s.backups,
    exporter: s.exporter,
    metrics: s.metrics,
    declared: s.declared,
    ssoEnabled: s.oidc !== null,
    invitations: s.invitations,
    publicUrl: s.publicUrl,
    checklist: gettingStarted(store, license, keys, s.users, s.invitations, () => access),
    health: () => healthReport({ license, store, jobs, embedder, startedAt: s.startedAt }),
    databaseAnswers: () => store.ping(),
    verifyKey: async (key) => await keys.verify(key),
    systemReport: () => systemReport({ store, dataDir: config.dataDir, embedder, startedAt: s.startedAt }),
    teamspaceReport: async (p) =>
      teamspaceReport({
        store,
        embedder,
        startedAt: s.startedAt,
        defaultTeamspaceId: keys.defaultTeamspaceId(),
        teamspace: { id: p.teamspaceId, name: (await store.accounts.teamspace(p.teamspaceId))?.name ?? String(p.teamspaceId) },
        canSee: (lib) => access.canSee(p, lib),
      }),
    access,
    sourceEnabled: (p, source) => teams.policies.sourceEnabled(teams.teamspaceOf(p), source),
    defaultTeamspaceId: () => keys.defaultTeamspaceId(),
    importRefusal: (p, header, visibility) => sourceRefusal({ teams }, p, { ...bundleMeta(header, header.project), visibility }),
    position: (id) => jobs.position(id),
  });
}

/** What a start queues: the sentence model's vectors still missing, or the ranking models never learned. */
async function queueStartupWork(s: Services, vectorsReset: boolean): Promise<void> {
  const { store, jobs, embedder, log, config } = s;
  if (embedder) await store.vectors.markAllComplete();
  if (vectorsReset) await scheduleReembed({ jobs, embedder, log }, 'embedder changed');
  else if (await lastReembedUnfinished(jobs)) await scheduleReembed({ jobs, embedder, log }, 'previous run unfinished');
  else if (config.learnRanking) await scheduleMissingModels(store, jobs, log);
  // A version written with the sentence model before a restart may still wait for its vectors.
  if (!vectorsReset && embedder?.deferred && (await store.vectors.versionCounts()).pending > 0)
    await scheduleReembed({ jobs, embedder, log }, 'snippets without vectors');
}

/** Every job kind and its handler, given what it needs. */
async function registerJobKinds(s: Services): Promise<void> {
  const { jobs, store, embedder, writer, log } = s;
  registerImportJob(jobs, { importer: s.importer, writer, store });
  // A version's completed vectors change the similarity features its model learned from: learn again.
  registerReembedJob(jobs, { store, embedder }, async (versionIds) => {
    if (!s.config.learnRanking) return;
    for (const id of versionIds) {
      const v = await store.libraries.version(id);
      if (v?.isCurrent) await queueSearchModel(jobs, id, v.libraryId);
    }
    if (versionIds.length) log.info({ versions: versionIds.length }, 'vectors complete: learning those ranking models again');
  });
  const gitDeps: GitJobDeps = {
    store,
    writer,
    config: s.config,
    credentials: s.gitCredentials,
    queueTag: (libraryId, tag) => s.git.queueTag(libraryId, tag),
    setRepoRules: (libraryId, previous, next) => s.teams.rules.replaceRepositoryRules(libraryId, previous, next),
  };
  jobs.register<GitJobPayload>(GIT_JOB, (ctx) => runGitJob(gitDeps, ctx, ctx.job.payload));
  if (await s.git.sweepWork()) log.info('removed clone folders of git jobs that are no longer running');
  registerVersionFetch(jobs, (ctx, libraryId, version) => s.git.fetchVersion(gitDeps, ctx, libraryId, version));
  registerCrawlJob(jobs, { store, writer, config: s.config, schedulesChanged: () => s.crawler.schedulesChanged() });
  await s.sources.register(jobs);
  const learn =
    store.backend === 'sqlite' ? sqliteLearner(store, embedder, s.activity.buffer) : postgresLearner(s.config.databaseUrl!, embedder, s.activity.buffer);
  registerSearchModelJob(jobs, { store, learn });
  registerOwnDocsJob(jobs, { store, writer, rootDir: ROOT_DIR });
}

/**
 * Periodic work beside the HTTP server (not in CLI commands): re-crawl schedules, the sweep of
 * abandoned uploads, the WAL keeper, the audit log's retention; and the indexing of the
 * instance's own documentation when it changed. Returns a stop function.
 */
export function startBackground(s: Services): () => void {
  const cluster = runOnceAcrossNodes(s.store.schedules);
  const stops = [
    startCrawlSchedules(s.crawler, cluster, s.log),
    importSweepTask(s.importer, s.log),
    s.sources.sweepTask(),
    s.license.watch((err) => s.log.warn({ err }, 'reading the shared license failed; the last one read stays in force')),
    // Keeps SQLite's write-ahead log file small: maintenance of the file, not SQL.
    // eslint-disable-next-line no-restricted-syntax
    ...(s.store.backend === 'sqlite' ? [walKeeperTask(s.store.db, s.log)] : []),
    auditPruneTask(
      s.audit,
      (n) => s.log.info({ entries: n }, 'audit entries past the retention pruned'),
      (err) => s.log.error({ err }, 'pruning the audit log failed'),
    ),
  ];
  if (s.config.backupSchedule) stops.push(startBackupSchedule(s.backups, s.config.backupSchedule, cluster, s.log, auditScheduledBackup(s.audit)));
  stops.push(startDeclaredSources(s.declared, s.config.sourcesSchedule, cluster, s.log, auditReconcile(s.audit, s.declared.file)));
  if (s.config.ownDocs)
    void queueOwnDocs({ jobs: s.jobs, store: s.store, rootDir: ROOT_DIR, log: s.log }).catch((err: unknown) =>
      s.log.warn({ err }, "the instance's own documentation could not be queued"),
    );
  return () => stops.forEach((stop) => stop());
}

/** Word rarity from the builtin table: the embedder's own when it is the builtin one, else loaded for this alone. */
async function wordRarity(embedder: Embedder | null, config: Config, log: Logger): Promise<WordRarity | null> {
  try {
    const table = embedder instanceof BuiltinEmbedder ? embedder.table : (await loadBuiltin(config.dataDir, log)).table;
    return (word) => table.rarity(word);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'word table unavailable: library-less searches never answer "nothing found"');
    return null;
  }
}
