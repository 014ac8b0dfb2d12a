import type { Config } from '../../config.ts';
import type { Store } from '../../store/index.ts';
import type { JobContext, JobQueue } from '../../jobs/queue.ts';
import { JobCancelled } from '../../jobs/queue.ts';
import type { LibraryWriter, VersionBuild } from '../../ingest/writer.ts';
import type { LibraryMeta } from '../../../lib/model.ts';
import { checkUrl, type NetPolicy } from '../../../lib/net/guard.ts';
import { scopeFor } from '../../../crawler/url.ts';
import { BrowserRenderer } from '../../../crawler/browser.ts';
import { crawlSite } from '../../../crawler/crawl.ts';
import { CRAWL_JOB, type CrawlPayload } from './service.ts';

export interface CrawlProgress {
  pagesDone: number;
  pagesQueued: number;
  pagesFailed: number;
  pagesSkipped: number;
  pagesDuplicate: number;
  pagesUnchanged: number;
  pagesRendered: number;
  snippets: number;
  errors: { url: string; error: string }[];
  [key: string]: unknown;
}

/** What a crawl job needs. */
export interface CrawlJobDeps {
  store: Pick<Store, 'libraries' | 'crawl' | 'jobs'>;
  writer: Pick<LibraryWriter, 'begin'>;
  config: Pick<Config, 'crawlAllowPrivate' | 'crawlPageTimeoutMs' | 'crawlRespectRobots' | 'chromiumPath' | 'crawlConcurrency'>;
  /** Tells the schedule task to reload (CrawlService.schedulesChanged) when the crawl set a schedule. */
  schedulesChanged(): void;
}

/** Registers the crawl job handler (jobs of kind 'crawl'; a job requeued after a restart resumes its frontier). */
export function registerCrawlJob(jobs: Pick<JobQueue, 'register'>, deps: CrawlJobDeps): void {
  jobs.register<CrawlPayload>(CRAWL_JOB, (ctx) => runCrawl(deps, ctx));
}

/**
 * Runs (or resumes) one crawl job. The frontier lives in SQLite: after a crash the pages that were
 * in flight are queued again and the job's unfinished library version is continued (snippets the
 * build already holds are skipped by its content hashes), so nothing is lost or stored twice.
 * The new version is swapped in only at the end; a failed or cancelled crawl throws its build away.
 * The crawl itself is crawler/crawl.ts (crawlSite); this is the job around it.
 */
export async function runCrawl(deps: CrawlJobDeps, ctx: JobContext<CrawlPayload>): Promise<void> {
  const { store, config } = deps;
  const p = ctx.job.payload;
  const jobId = ctx.job.id;
  const policy: NetPolicy = { allowPrivate: config.crawlAllowPrivate };
  const timeoutMs = config.crawlPageTimeoutMs;
  const scope = scopeFor(p.startUrl, p.excludePatterns);
  const respectRobots = p.respectRobots ?? config.crawlRespectRobots;
  await checkUrl(p.startUrl, policy);

  const library = store.libraries.get(p.libraryId);
  const site = library ? store.crawl.site(p.libraryId) : null;
  const meta: LibraryMeta = {
    id: p.libraryId,
    title: p.name ?? library?.title ?? new URL(p.startUrl).host,
    description: p.description ?? library?.description ?? `Documentation crawled from ${p.startUrl}`,
    sourceType: 'website',
    sourceUrl: p.startUrl,
    docsSiteUrl: p.startUrl,
  };
  let build: VersionBuild | null = deps.writer.begin(meta, { tag: '', jobId, resume: true });
  const renderer = new BrowserRenderer({ executablePath: config.chromiumPath, policy, timeoutMs, maxPages: config.crawlConcurrency, log: ctx.log });
  const progress = (): CrawlProgress => crawlProgress(store, p, jobId, renderer.rendered, build?.snippetCount ?? 0);
  const report = throttled(250, () => ctx.progress(progress()));

  try {
    const crawled = await crawlSite(
      { jobId, libraryId: p.libraryId, startUrl: p.startUrl, scope, maxPages: p.maxPages, maxDepth: p.maxDepth, respectRobots, policy, timeoutMs, concurrency: config.crawlConcurrency, siteName: site?.siteTitle ?? null },
      { frontier: store.crawl, sink: build, renderer, signal: ctx.signal, log: ctx.log, checkCancelled: () => checkCancelled(store, ctx), report, isCancellation: (err) => err instanceof JobCancelled },
    );
    const final = progress();
    ctx.progress(final);
    if (build.snippetCount === 0) {
      const first = final.errors[0];
      throw new Error(`Nothing could be indexed from ${p.startUrl}${first ? `: ${first.url}: ${first.error}` : ' (no documentation content found)'}.`);
    }
    // Continue the same build with the final metadata (the site name is known only now), then swap it in.
    const finalMeta: LibraryMeta = { ...meta, title: p.name ?? library?.title ?? crawled.siteName ?? meta.title };
    build = deps.writer.begin(finalMeta, { tag: '', jobId, resume: true });
    const totals = build.commit();
    finishSite(deps, p, jobId, crawled.siteName);
    ctx.progress({ ...progress(), snippets: totals.snippets, tokens: totals.tokens });
    ctx.log.info({ libraryId: p.libraryId, pages: final.pagesDone, snippets: totals.snippets }, 'crawl finished');
  } catch (err) {
    // A shutdown leaves the build for the resumed job; a cancel or a failure throws it away so the
    // previous version stays served.
    const shutdown = ctx.signal.aborted && !(ctx.signal.reason instanceof JobCancelled) && !(err instanceof JobCancelled);
    if (!shutdown) build?.abort();
    try {
      ctx.progress(progress());
    } catch {
      /* the store may be closing */
    }
    throw err;
  } finally {
    await renderer.close();
  }
}

function checkCancelled(store: Pick<Store, 'jobs'>, ctx: JobContext<CrawlPayload>): void {
  if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new JobCancelled('cancelled');
  // A cancel requested from another process (the CLI) shows only in the job row.
  if (store.jobs.isCancelRequested(ctx.job.id)) throw new JobCancelled('cancelled');
}

/** The job's progress, from the frontier's counts. */
function crawlProgress(store: Pick<Store, 'crawl'>, p: CrawlPayload, jobId: number, pagesRendered: number, snippets: number): CrawlProgress {
  const c = store.crawl.counts(jobId);
  return {
    pagesDone: c.done + c.unchanged + c.duplicate, pagesQueued: c.queued + c.processing, pagesFailed: c.failed, pagesSkipped: c.skipped,
    pagesDuplicate: c.duplicate, pagesUnchanged: c.unchanged, pagesRendered, snippets,
    errors: store.crawl.errors(jobId, 10), libraryId: p.libraryId, startUrl: p.startUrl,
  };
}

/** Calls fn at most once per `ms`, unless forced. */
function throttled(ms: number, fn: () => void): (force?: boolean) => void {
  let last = 0;
  return (force = false) => {
    if (!force && Date.now() - last < ms) return;
    last = Date.now();
    fn();
  };
}

/** After the commit: the site's options and schedule, and the frontiers and pages this crawl left behind. */
function finishSite(deps: CrawlJobDeps, p: CrawlPayload, jobId: number, siteName: string | null): void {
  const { store } = deps;
  const now = () => new Date().toISOString();
  store.crawl.saveSite(
    {
      libraryId: p.libraryId, startUrl: p.startUrl, schedule: p.schedule,
      options: { maxPages: p.maxPages, maxDepth: p.maxDepth, excludePatterns: p.excludePatterns, respectRobots: p.respectRobots, name: p.name, description: p.description },
      siteTitle: siteName, lastJobId: jobId, lastCrawledAt: now(),
    },
    now(),
  );
  store.crawl.purgeFinishedFrontiers(p.libraryId, jobId);
  store.crawl.prunePages(p.libraryId, jobId);
  if (p.schedule !== undefined) deps.schedulesChanged();
}
