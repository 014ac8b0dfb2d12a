import fs from 'node:fs';
import path from 'node:path';
import type { Principal } from '../lib/model.ts';
import { databasePoolSizeOf, requestThreadVectorCacheBytes, workerVectorCacheBytes, type Config } from './config.ts';
import type { Logger } from './log.ts';
import { describeEmbedder } from './embed/index.ts';
import type { Embedder } from './embed/types.ts';
import type { Store } from './store/index.ts';
import type { PgStore } from './store/pg/index.ts';
import type { Stores } from './store/stores.ts';
import { openStore } from './store/open.ts';
import type { LicenseService } from './license/license.ts';
import type { KeyService } from './auth/keys.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { AccessPolicy } from './search/answer-types.ts';
import type { StoreContextService } from './search/context-service.ts';
import type { TeamService } from './teams/index.ts';
import type { UserService } from './auth/users.ts';
import type { InvitationService } from './auth/invitations.ts';
import { checklist } from './system/getting-started.ts';
import { BackupService, sqliteDatabases } from './backup/service.ts';
import { postgresDatabases } from './backup/postgres.ts';
import type { StagedFiles } from './ingest/staged-files.ts';
import { ExportService } from './ingest/export.ts';
import { ExportSnapshot } from './store/export.ts';
import { PgExportSnapshot } from './store/pg/export.ts';
import { Metrics } from './metrics/metrics.ts';
import { modelCacheStats } from './search/models.ts';
import { DeclaredSources } from './sources/declared/reconcile.ts';
import type { CrawlService } from './sources/website/service.ts';
import type { SourceService } from './sources/service.ts';
import type { GitSourceService } from './sources/git/service.ts';

/**
 * Parts of the composition root (server/services.ts) that build one group of services each: the
 * state's backend, the first-run checklist, the day-two aids (backups, exports, metrics) and
 * sources.yaml. Only services.ts imports this module.
 */

/** The state: PostgreSQL when STACKS_DATABASE_URL is set, else the SQLite file in the data dir (server/store/open.ts). */
export async function stateOf(config: Config, log: Logger): Promise<Store | PgStore> {
  const poolSize = databasePoolSizeOf(config);
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    poolSize,
    vectorCacheBytes: { sqlite: requestThreadVectorCacheBytes(config), postgres: workerVectorCacheBytes(config) },
    onError: (err) => log.warn({ err }, 'PostgreSQL: a connection or a refresh failed'),
  });
  if (store.backend === 'postgres') log.info({ pool: poolSize }, 'the state is in PostgreSQL (STACKS_DATABASE_URL)');
  return store;
}

/** The first-run checklist of a caller, from what exists (server/system/getting-started.ts). */
export function gettingStarted(
  store: Stores,
  license: LicenseService,
  keys: KeyService,
  users: UserService,
  invitations: InvitationService,
  access: () => AccessPolicy,
) {
  return (p: Principal) =>
    checklist(
      {
        license: () => license.status(),
        libraries: async (reader) => (await store.libraries.list()).filter((lib) => access().canSee(reader, lib)),
        keys: async (teamspaceId) => {
          const all = await keys.list();
          return all.filter((k) => k.teamspaceId === teamspaceId && !k.revokedAt).map((k) => ({ firstStart: keys.isFirstStartKey(k, all) }));
        },
        users: async (teamspaceId) => (await users.list(teamspaceId)).length,
        invited: async (teamspaceId) => await invitations.any(teamspaceId),
      },
      p,
    );
}

/** What day-two operations use: backups, exports, and the metrics (their gauges read the store, the retrieval pool and the caches). */
export function operationsAids(
  config: Config,
  log: Logger,
  store: Store | PgStore,
  jobs: JobQueue,
  teams: TeamService,
  context: StoreContextService,
  access: () => AccessPolicy,
  staged: StagedFiles,
) {
  // SQLite: the online page-level backup of the file, in steps (32 MB) between which requests run
  // (its own connection's writes are carried over). PostgreSQL: copied into the same archive's
  // SQLite files from one snapshot, in a worker thread (server/backup/postgres.ts).
  const snapshot =
    store.backend === 'sqlite'
      ? // eslint-disable-next-line no-restricted-syntax
        sqliteDatabases(store.db, 8192)
      : postgresDatabases(config.databaseUrl!);
  const backups = new BackupService({ snapshot, dataDir: config.dataDir, backupDir: config.backupDir!, keep: config.backupKeep, log, staged });
  const exporter = new ExportService({
    snapshot: () => (store.backend === 'sqlite' ? new ExportSnapshot(store.file) : PgExportSnapshot.open(store.pool)),
    access,
  });
  const metrics = new Metrics({
    jobCounts: () => store.jobs.counts(),
    // The SQLite files' sizes; PostgreSQL's size is the database server's to report (pg_database_size), not a node's.
    databaseBytes: () =>
      store.backend === 'sqlite'
        ? Object.fromEntries(['stacks.db', 'stacks.db-wal', 'usage.db', 'usage.db-wal'].map((f) => [f, fileSize(path.join(config.dataDir, f))]))
        : {},
    catalog: async () => {
      const served = (await store.libraries.allCurrentVersions()).filter((v) => v.state === 'ready');
      return { libraries: new Set(served.map((v) => v.libraryId)).size, versions: served.length, snippets: served.reduce((n, v) => n + v.totalSnippets, 0) };
    },
    workers: () => context.poolStats(),
    caches: () => ({ teamspace_policies: teams.cache.stats(), ranking_models: modelCacheStats() }),
    database: () => ({ backend: store.backend, pool: store.poolStats() }),
    leases: () => jobs.leases(),
  });
  jobs.observe((kind, outcome, seconds) => metrics.observeJob(kind, outcome, seconds));
  return { backups, exporter, metrics };
}

/** sources.yaml: its entries queued through the same crawl and source services as the API, as the operator. */
export function declaredSources(
  config: Config,
  log: Logger,
  store: Stores,
  jobs: JobQueue,
  { crawler, sources, git }: { crawler: CrawlService; sources: SourceService; git: GitSourceService },
  license: LicenseService,
  defaultTeamspaceId: () => number,
) {
  return new DeclaredSources({
    store,
    dataDir: config.dataDir,
    log,
    defaultTeamspaceId,
    submit: {
      crawl: (req, who) => crawler.submit({ ...req, trigger: 'api' }, who),
      openApi: (req, who) => sources.submitOpenApiUrl(req, who),
      llmsTxt: (req, who) => sources.submitLlmsTxt(req, who),
      git: (req, who) => git.submit(req, who),
      license: (feature) => void license.require(feature),
    },
    jobs,
  });
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * On PostgreSQL the vectors are every node's. A node running the builtin word vectors only because
 * its sentence model is unavailable (createEmbedder's fallback) must not replace the cluster's model
 * vectors: ensure() would reset them under every node, a re-embed of every snippet would follow,
 * and another when the model is back. Such a node stops at startup and says why instead.
 */
export async function refuseFallbackOnSharedVectors(store: Stores, embedder: Embedder): Promise<void> {
  const { fallback } = describeEmbedder(embedder);
  if (store.backend === 'sqlite' || fallback === null) return;
  const stored = await store.vectors.filledBy();
  if (stored === null || stored.startsWith(`${embedder.id}:`)) return;
  throw new Error(
    `This node would run ${embedder.id} because ${fallback}, but the database's vectors are ${stored}: starting it would re-embed every node's snippets. ` +
      'Install the sentence model on this node (./install.sh) and start it again.',
  );
}
