import cron from 'node-cron';
import type { Config } from '../../config.ts';
import type { Stores } from '../../store/stores.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { ApiError } from '../../../lib/errors.ts';
import { checkUrl } from '../../../lib/net/guard.ts';
import { libraryIdFor, patternToRegExp } from '../../../crawler/url.ts';
import { ownerConflict, type Submitter } from '../../../lib/owner.ts';
import type { LibraryVisibility } from '../../../lib/model.ts';

export const CRAWL_JOB = 'crawl';
export const DEFAULT_MAX_PAGES = 500;

/** The job payload of a crawl (kind 'crawl'). */
export interface CrawlPayload {
  libraryId: string;
  startUrl: string;
  maxPages: number;
  /** Link hops from the start URL; null = unlimited (then sitemap.xml also seeds the crawl). */
  maxDepth: number | null;
  excludePatterns: string[];
  name: string | null;
  description: string | null;
  /** null = the server's crawlRespectRobots setting. */
  respectRobots: boolean | null;
  /** Cron expression for re-crawls; undefined keeps the stored one, null removes it. */
  schedule?: string | null;
  trigger: 'api' | 'cli' | 'schedule';
  /** Owner and visibility of a new library (absent in re-crawls and older jobs: the library keeps its own). */
  teamspaceId?: number | null;
  visibility?: LibraryVisibility;
}

export interface CrawlRequest {
  websiteUrl: string;
  maxPages?: number;
  maxDepth?: number | null;
  excludePatterns?: string[];
  name?: string | null;
  description?: string | null;
  force?: boolean;
  respectRobots?: boolean | null;
  schedule?: string | null;
  trigger?: CrawlPayload['trigger'];
}

export interface CrawlSubmission {
  libraryId: string;
  jobId: number;
  /** Place in the job queue, null when the crawl started at once. */
  position: number | null;
  recrawl: boolean;
}

/** What CrawlService needs. */
export interface CrawlServiceDeps {
  store: Pick<Stores, 'jobs' | 'libraries' | 'crawl'>;
  jobs: Pick<JobQueue, 'enqueueUnless'>;
  config: Pick<Config, 'crawlAllowPrivate'>;
}

/** Submits crawls (HTTP, CLI, schedule) and manages per-library re-crawl schedules. */
export class CrawlService {
  private scheduleListeners = new Set<() => void>();

  constructor(private readonly s: CrawlServiceDeps) {}

  /** Called when a schedule may have changed (the schedule task reloads at once instead of at its next poll). */
  onSchedulesChanged(listener: () => void): () => void {
    this.scheduleListeners.add(listener);
    return () => this.scheduleListeners.delete(listener);
  }

  schedulesChanged(): void {
    for (const l of this.scheduleListeners) l();
  }

  /**
   * Validates and queues a crawl. The same site again is a conflict unless `force` is set
   * (then it is re-crawled; the current version stays served until the new one is complete);
   * a site that is being crawled right now is always a conflict.
   */
  async submit(req: CrawlRequest, who: Submitter): Promise<CrawlSubmission> {
    const url = await checkUrl(req.websiteUrl, { allowPrivate: this.s.config.crawlAllowPrivate });
    url.hash = '';
    const startUrl = url.href;
    const libraryId = libraryIdFor(startUrl);
    for (const pattern of req.excludePatterns ?? []) {
      try {
        patternToRegExp(pattern);
      } catch {
        throw new ApiError('validation_error', `excludePatterns: invalid pattern ${JSON.stringify(pattern)}.`);
      }
    }
    if (req.schedule) validateSchedule(req.schedule);
    const crawling = (id: number) => new ApiError('conflict', `${libraryId} is being crawled right now (job ${id}).`);
    const active = await this.s.store.jobs.active(CRAWL_JOB, libraryId);
    if (active.length > 0) throw crawling(active[0]!.id);
    const existing = await this.s.store.libraries.get(libraryId);
    const taken = ownerConflict(existing, who);
    if (taken) throw new ApiError('conflict', taken);
    const indexed = existing ? (await this.s.store.libraries.currentVersion(libraryId, '')) !== null : false;
    if (indexed && !req.force)
      throw new ApiError('conflict', `${libraryId} is already indexed; crawl it again with force (\"force\": true, or --force on the CLI).`);
    const payload: CrawlPayload = {
      libraryId,
      startUrl,
      maxPages: req.maxPages ?? DEFAULT_MAX_PAGES,
      maxDepth: req.maxDepth ?? null,
      excludePatterns: req.excludePatterns ?? [],
      name: req.name ?? null,
      description: req.description ?? null,
      respectRobots: req.respectRobots ?? null,
      trigger: req.trigger ?? 'api',
      teamspaceId: who.teamspaceId,
      visibility: who.visibility,
      ...(req.schedule !== undefined ? { schedule: req.schedule } : {}),
    };
    // Checked again as the job is queued: another request may have queued a crawl since.
    const queued = await this.s.jobs.enqueueUnless(
      CRAWL_JOB,
      payload,
      { libraryId, memberId: who.memberId, teamspaceId: who.teamspaceId },
      { kinds: [CRAWL_JOB] },
    );
    if (!queued.created) throw crawling(queued.id);
    return { libraryId, jobId: queued.id, position: queued.position, recrawl: indexed };
  }

  /** Queues a re-crawl of a crawled library with its stored options (unchanged pages are skipped by their validators). */
  async recrawl(libraryId: string, trigger: CrawlPayload['trigger']): Promise<{ jobId: number; position: number | null } | null> {
    const site = await this.s.store.crawl.site(libraryId);
    if (!site) throw new ApiError('library_not_found', `${libraryId} is not a crawled website.`);
    const o = site.options as Partial<CrawlPayload>;
    const payload: CrawlPayload = {
      libraryId,
      startUrl: site.startUrl,
      maxPages: o.maxPages ?? DEFAULT_MAX_PAGES,
      maxDepth: o.maxDepth ?? null,
      excludePatterns: o.excludePatterns ?? [],
      name: o.name ?? null,
      description: o.description ?? null,
      respectRobots: o.respectRobots ?? null,
      trigger,
    };
    // The job belongs to the library's teamspace (its start URL is that teamspace's business).
    const queued = await this.s.jobs.enqueueUnless(
      CRAWL_JOB,
      payload,
      { libraryId, memberId: null, teamspaceId: (await this.s.store.libraries.get(libraryId))?.teamspaceId ?? null },
      { kinds: [CRAWL_JOB] },
    );
    return queued.created ? { jobId: queued.id, position: queued.position } : null;
  }

  /** Sets (cron expression) or clears (null) the re-crawl schedule of a crawled library. */
  async setSchedule(libraryId: string, schedule: string | null): Promise<void> {
    if (schedule) validateSchedule(schedule);
    if (!(await this.s.store.crawl.setSchedule(libraryId, schedule, new Date().toISOString()))) {
      throw new ApiError('library_not_found', `${libraryId} is not a crawled website (crawl it once first).`);
    }
    this.schedulesChanged();
  }

  sites() {
    return this.s.store.crawl.sites();
  }
}

export function validateSchedule(expr: string): void {
  if (!cron.validate(expr)) throw new ApiError('validation_error', `schedule: ${JSON.stringify(expr)} is not a valid cron expression (e.g. "0 3 * * *").`);
}
