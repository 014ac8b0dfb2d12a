import fs from 'node:fs';
import path from 'node:path';
import { openSqlite } from '../../lib/sqlite.ts';
import { openDb, type Db } from './db.ts';
import type { SharedVectorChunks } from './vector-chunks.ts';
import { LibraryStore } from './libraries.ts';
import { SnippetStore } from './snippets.ts';
import { VectorStore } from './vectors.ts';
import { JobStore } from './jobs.ts';
import { AccountStore } from './accounts.ts';
import { CrawlStore } from './crawl.ts';
import { SearchProbeStore } from './search-probe.ts';
import { SearchStore } from './search.ts';
import { ResearchUsageStore } from './research.ts';
import { TermStore } from './terms.ts';
import { SearchModelStore } from './search-models.ts';
import { AuditStore } from './audit.ts';
import { UserStore } from './users.ts';
import { GitStore } from './git.ts';
import { DeclaredStore } from './declared.ts';
import { InvitationStore } from './invitations.ts';
import { SettingsStore } from './settings.ts';
import { TeamStore } from './teams.ts';
import { MembershipStore } from './membership.ts';
import { ScheduleStore } from './schedules.ts';
import type { Stores } from './stores.ts';

export type { Db };
export type { Backend, PoolStats, Stores } from './stores.ts';

/** Whether `dataDir` holds a Stacks database: a stacks.db SQLite file with the migrations table (read only; nothing is created). */
export function holdsStacksDatabase(dataDir: string): boolean {
  const file = path.join(dataDir, 'stacks.db');
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return false;
  try {
    const db = openSqlite(file, { readonly: true, fileMustExist: true });
    try {
      return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/**
 * The SQLite backend: every store over one file per data dir (the default; `PgStore` in pg/ is the
 * PostgreSQL one). Services see it as `Stores` (stores.ts) and await every call: each method is one
 * atomic unit (one transaction when it writes several rows), since a SQLite transaction cannot span
 * an await; whatever must be atomic is one method (createBuild, swapIn, deleteIfUnversioned), with
 * a pure callback when a service decides inside it (JobStore.queueEach, TeamStore.countRequests).
 *
 * Synchronous, on purpose: what the search pipeline reads inside one read snapshot (search.snapshot),
 * on the retrieval workers and on the request thread, through sqliteSearchReads/sqliteVersionReads
 * (version-reads.ts), and TeamPolicyReads behind the team cache. The search side's steps are written
 * once over those reads; PostgreSQL's twins answer them with promises (pg/version-reads.ts).
 */
export class Store implements Stores {
  readonly backend = 'sqlite' as const;
  readonly libraries: LibraryStore;
  readonly snippets: SnippetStore;
  readonly vectors: VectorStore;
  readonly jobs: JobStore;
  readonly accounts: AccountStore;
  readonly crawl: CrawlStore;
  readonly probe: SearchProbeStore;
  readonly search: SearchStore;
  readonly research: ResearchUsageStore;
  readonly terms: TermStore;
  readonly models: SearchModelStore;
  readonly audit: AuditStore;
  readonly users: UserStore;
  readonly git: GitStore;
  readonly declared: DeclaredStore;
  readonly invitations: InvitationStore;
  readonly settings: SettingsStore;
  readonly membership: MembershipStore;
  readonly schedules: ScheduleStore;
  /** One node: the rate limit's buckets stay in the process (server/teams/rate-limit.ts). */
  readonly rateLimits = null;
  private teamStore: TeamStore | null = null;

  /**
   * `vectorCacheBytes`: memory for the vectors of recently searched versions on this connection (vector-chunks.ts); default none.
   * `sharedVectors`: a cache of complete versions' vectors shared with other connections (the retrieval workers).
   */
  constructor(
    readonly db: Db,
    options: { vectorCacheBytes?: number; sharedVectors?: SharedVectorChunks } = {},
  ) {
    this.libraries = new LibraryStore(db);
    this.snippets = new SnippetStore(db);
    this.vectors = new VectorStore(db);
    this.jobs = new JobStore(db, this.libraries);
    this.accounts = new AccountStore(db);
    this.crawl = new CrawlStore(db);
    this.probe = new SearchProbeStore(db);
    this.search = new SearchStore(db, options);
    this.research = new ResearchUsageStore(db);
    this.audit = new AuditStore(db);
    this.users = new UserStore(db);
    this.git = new GitStore(db);
    this.declared = new DeclaredStore(db);
    this.invitations = new InvitationStore(db);
    this.settings = new SettingsStore(db);
    this.membership = new MembershipStore(db);
    this.schedules = new ScheduleStore(db);
    this.terms = new TermStore(db);
    this.models = new SearchModelStore(db);
  }

  /** Made on first use: its statements read the usage tables, which a read-only (worker) connection does not attach. */
  get teams(): TeamStore {
    return (this.teamStore ??= new TeamStore(this.db));
  }

  static open(dataDir: string, options: { vectorCacheBytes?: number } = {}): Store {
    return new Store(openDb(path.join(dataDir, 'stacks.db')), options);
  }

  /** The database file, for what opens its own read-only connection to it (the search workers, an export's snapshot); ':memory:' for an in-memory one. */
  get file(): string {
    return this.db.name;
  }

  /** No pool: one connection per thread (the request thread's, each retrieval worker's). */
  poolStats(): null {
    return null;
  }

  /** True when the database answers a query. */
  async ping(): Promise<boolean> {
    try {
      return (this.db.prepare('SELECT 1 AS ok').get() as { ok: number }).ok === 1;
    } catch {
      return false;
    }
  }

  close(): void {
    this.db.close();
  }
}
