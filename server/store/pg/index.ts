import type { PoolStats, Stores } from '../stores.ts';
import { PgAccountStore } from './accounts.ts';
import { PgAuditStore } from './audit.ts';
import { PgCrawlStore } from './crawl.ts';
import { PgDeclaredStore } from './declared.ts';
import { PgGitStore } from './git.ts';
import { PgInvitationStore } from './invitations.ts';
import { PgJobStore } from './jobs.ts';
import { PgLibraryStore } from './libraries.ts';
import { PgMembershipStore } from './membership.ts';
import { migratePg } from './migrate.ts';
import { openPgPool, type PgPool } from './pool.ts';
import { PgRateLimitStore } from './rate-limits.ts';
import { PgResearchUsageStore } from './research.ts';
import { PgScheduleStore } from './schedules.ts';
import { PgSearchModelStore } from './search-models.ts';
import { PgSearchProbeStore } from './search-probe.ts';
import { PgSearchStore } from './search.ts';
import { PgSettingsStore } from './settings.ts';
import { PgSnippetStore } from './snippets.ts';
import { PgStagedFileStore } from './staged-files.ts';
import { PgTeamPolicyReads } from './team-policy.ts';
import { PgTeamStore } from './teams.ts';
import { PgTermStore } from './terms.ts';
import { PgUserStore } from './users.ts';
import { PgVectorStore } from './vectors.ts';

/**
 * Every store on PostgreSQL (STACKS_DATABASE_URL), behind the same interface as SQLite's Store
 * (stores.ts). Built by open(): the pool, the migrations (once per cluster, under an advisory lock),
 * and the node's in-memory copy of the teamspace policies the search path reads synchronously.
 */
export class PgStore implements Stores {
  readonly backend = 'postgres' as const;
  readonly libraries: PgLibraryStore;
  readonly snippets: PgSnippetStore;
  readonly vectors: PgVectorStore;
  readonly jobs: PgJobStore;
  readonly accounts: PgAccountStore;
  readonly crawl: PgCrawlStore;
  readonly probe: PgSearchProbeStore;
  readonly search: PgSearchStore;
  readonly research: PgResearchUsageStore;
  readonly terms: PgTermStore;
  readonly models: PgSearchModelStore;
  readonly audit: PgAuditStore;
  readonly users: PgUserStore;
  readonly git: PgGitStore;
  readonly declared: PgDeclaredStore;
  readonly invitations: PgInvitationStore;
  readonly settings: PgSettingsStore;
  readonly membership: PgMembershipStore;
  readonly schedules: PgScheduleStore;
  readonly teams: PgTeamStore & { readonly policy: PgTeamPolicyReads };
  readonly rateLimits: PgRateLimitStore;
  /** Jobs' staged inputs, for the node that runs a job another node took the upload of (no SQLite twin: there the one node's disk holds them). */
  readonly staged: PgStagedFileStore;

  private constructor(
    readonly pool: PgPool,
    policy: PgTeamPolicyReads,
    options: { vectorCacheBytes?: number },
  ) {
    this.libraries = new PgLibraryStore(pool);
    this.snippets = new PgSnippetStore(pool);
    this.vectors = new PgVectorStore(pool);
    this.jobs = new PgJobStore(pool, this.libraries);
    this.accounts = new PgAccountStore(pool);
    this.crawl = new PgCrawlStore(pool);
    this.probe = new PgSearchProbeStore(pool);
    this.search = new PgSearchStore(pool, options);
    this.research = new PgResearchUsageStore(pool);
    this.terms = new PgTermStore(pool);
    this.models = new PgSearchModelStore(pool);
    this.audit = new PgAuditStore(pool);
    this.users = new PgUserStore(pool);
    this.git = new PgGitStore(pool);
    this.declared = new PgDeclaredStore(pool);
    this.invitations = new PgInvitationStore(pool);
    this.settings = new PgSettingsStore(pool);
    this.membership = new PgMembershipStore(pool);
    this.schedules = new PgScheduleStore(pool);
    this.teams = Object.assign(new PgTeamStore(pool), { policy });
    this.rateLimits = new PgRateLimitStore(pool);
    this.staged = new PgStagedFileStore(pool);
  }

  /**
   * Connects, migrates and loads the policies. `poolSize`: connections of this node;
   * `vectorCacheBytes`: the node's cache of versions' vectors when the server has no pgvector.
   */
  static async open(url: string, options: { poolSize?: number; vectorCacheBytes?: number; onError?: (err: unknown) => void } = {}): Promise<PgStore> {
    const pool = openPgPool(url, { max: options.poolSize, onIdleError: options.onError });
    try {
      await migratePg(pool);
      const policy = await PgTeamPolicyReads.open(pool, 1000, options.onError);
      return new PgStore(pool, policy, options);
    } catch (err) {
      await pool.end();
      throw err;
    }
  }

  /** The pool now: its size, its connections open, those idle, and requests waiting for one (for /metrics and /api/health). */
  poolStats(): PoolStats {
    return { size: this.pool.options.max, total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.pool.query<{ ok: number }>('SELECT 1 AS ok')).rows[0]?.ok === 1;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.teams.policy.close();
    await this.pool.end();
  }
}
