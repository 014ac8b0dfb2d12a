import type { LibraryStore } from './libraries.ts';
import type { SnippetStore } from './snippets.ts';
import type { VectorStore } from './vectors.ts';
import type { JobStore } from './jobs.ts';
import type { AccountStore } from './accounts.ts';
import type { CrawlStore } from './crawl.ts';
import type { SearchProbeStore } from './search-probe.ts';
import type { ResearchUsageStore } from './research.ts';
import type { TermStore } from './terms.ts';
import type { SearchModelStore } from './search-models.ts';
import type { AuditStore } from './audit.ts';
import type { UserStore } from './users.ts';
import type { GitStore } from './git.ts';
import type { DeclaredStore } from './declared.ts';
import type { InvitationStore } from './invitations.ts';
import type { SettingsStore } from './settings.ts';
import type { TeamPolicyReads, TeamStore } from './teams.ts';
import type { MembershipStore } from './membership.ts';
import type { ScheduleStore } from './schedules.ts';
import type { RateLimitStore } from './rate-limits.ts';

/** A value at once (SQLite's stores) or later (PostgreSQL's). */
export type Awaitable<T> = T | Promise<T>;

/** Which database holds the state: the embedded SQLite file (the default) or PostgreSQL (STACKS_DATABASE_URL). */
export type Backend = 'sqlite' | 'postgres';

/**
 * A store as a caller that works on both backends sees it: a method SQLite answers at once may
 * answer with a promise (PostgreSQL's twin), so the caller awaits each one; one already async on
 * SQLite stays a promise.
 */
export type EitherShape<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => [R] extends [PromiseLike<unknown>] ? Promise<Awaited<R>> : Awaitable<R> : T[K];
};

/** A connection pool now: its size (connections it may open), connections open, those of them idle, and queries waiting for one. */
export interface PoolStats {
  size: number;
  total: number;
  idle: number;
  waiting: number;
}

/** What the search path reads of teamspaces synchronously (TeamCache): SQLite's statements, or a node's in-memory copy on PostgreSQL. */
export type PolicyReads = Pick<TeamPolicyReads, 'dataVersion' | 'teamspace' | 'rulesFor'>;

/**
 * The one interface of the state, whichever backend holds it (docs/architecture.md, "Stores"):
 * `Store` (SQLite, server/store/index.ts) and `PgStore` (PostgreSQL, server/store/pg/index.ts) both
 * satisfy it. Services take this type and await every call. What only one backend has (SQLite's
 * file for the retrieval workers and the page-level backup; PostgreSQL's pool) is reached through
 * `backend` and the concrete classes, in the composition root and the search side only.
 */
export interface Stores {
  readonly backend: Backend;
  readonly libraries: EitherShape<LibraryStore>;
  readonly snippets: EitherShape<SnippetStore>;
  readonly vectors: EitherShape<VectorStore>;
  /** queueEach is generic, which a mapped type would erase; it is async on both backends. */
  readonly jobs: EitherShape<Omit<JobStore, 'queueEach'>> & Pick<JobStore, 'queueEach'>;
  readonly accounts: EitherShape<AccountStore>;
  readonly crawl: EitherShape<CrawlStore>;
  readonly probe: EitherShape<SearchProbeStore>;
  readonly research: EitherShape<ResearchUsageStore>;
  readonly terms: EitherShape<TermStore>;
  readonly models: EitherShape<SearchModelStore>;
  readonly audit: EitherShape<AuditStore>;
  readonly users: EitherShape<UserStore>;
  readonly git: EitherShape<GitStore>;
  readonly declared: EitherShape<DeclaredStore>;
  readonly invitations: EitherShape<InvitationStore>;
  readonly settings: EitherShape<SettingsStore>;
  readonly membership: EitherShape<MembershipStore>;
  readonly schedules: EitherShape<ScheduleStore>;
  /** countRequests is generic (see jobs) and async on both; policy is read synchronously (TeamCache). */
  readonly teams: EitherShape<Omit<TeamStore, 'policy' | 'countRequests'>> & Pick<TeamStore, 'countRequests'> & { readonly policy: PolicyReads };
  /** The request rate limit's buckets shared by the nodes; null on SQLite, whose one node keeps them in memory (server/teams/rate-limit.ts). */
  readonly rateLimits: RateLimitStore | null;
  /** The connection pool's figures (for /api/health and /metrics); null on SQLite, which has a connection per thread and no pool. */
  poolStats(): PoolStats | null;
  /** True when the database answers a query. */
  ping(): Promise<boolean>;
  close(): void | Promise<void>;
}
