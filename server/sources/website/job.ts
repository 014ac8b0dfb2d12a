import type { Config } from '../../config.ts';
import type { Stores } from '../../store/stores.ts';
import type { JobContext, JobQueue } from '../../jobs/queue.ts';
import { JobCancelled } from '../../jobs/queue.ts';
import { runVersionJob, type VersionJobDeps } from '../../ingest/version-job.ts';
import type { LibraryMeta } from '../../../lib/model.ts';
import { checkUrl, type NetPolicy } from '../../../lib/net/guard.ts';
import { scopeFor } from '../../../crawler/url.ts';
import { BrowserRenderer } from '../../../crawler/browser.ts';
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
export interface CrawlJobDeps extends VersionJobDeps {
  store: Pick<Stores, 'libraries' | 'crawl'>;
  config: Pick<Config, 'crawlAllowPrivate' | 'crawlPageTimeoutMs' | 'crawlRespectRobots' | 'chromiumPath' | 'crawlConcurrency'>;
  /** Tells the schedule task to reload (CrawlService.schedulesChanged) when the crawl set a schedule. */
  schedulesChanged(): void;
}

/** Registers the crawl job handler (jobs of kind 'crawl'; a job requeued after a restart resumes its frontier). */
export function registerCrawlJob(jobs: Pick<JobQueue, 'register'>, deps: CrawlJobDeps): void {
  jobs.register<CrawlPayload>(CRAWL_JOB, (ctx) => runCrawl(deps, ctx));
}

/**
 * Runs (or resumes) one crawl job in the version-build frame (server/ingest/version-job.ts). The
 * frontier lives in SQLite: after a crash the pages that were in flight are queued again and the
 * job's unfinished library version is continued (snippets the build already holds are skipped by
 * its content hashes), so nothing is lost or stored twice. The crawl itself is crawler/crawl.ts
 * (crawlSite); this is the job around it.
 */
/** The crawler (HTML extraction pulls in linkedom, half a second to load): only jobs that crawl load it. */
const crawler = () => import('../../../crawler/crawl.ts');

export async function runCrawl(deps: CrawlJobDeps, ctx: JobContext<CrawlPayload>): Promise<void> {
  const { store, config } = deps;
  const p = ctx.job.payload;
  const jobId = ctx.job.id;
  const policy: NetPolicy = { allowPrivate: config.crawlAllowPrivate };
  const timeoutMs = config.crawlPageTimeoutMs;
  await checkUrl(p.startUrl, policy);

  const library = await store.libraries.get(p.libraryId);
  const site = library ? await store.crawl.site(p.libraryId) : null;
  const meta: LibraryMeta = {
    id: p.libraryId,
    title: p.name ?? library?.title ?? new URL(p.startUrl).host,
    description: p.description ?? library?.description ?? `Documentation crawled from ${p.startUrl}`,
    sourceType: 'website',
    sourceUrl: p.startUrl,
    docsSiteUrl: p.startUrl,
    teamspaceId: p.teamspaceId ?? null,
    visibility: p.visibility,
  };
  let siteName: string | null = null;
  await runVersionJob(deps, ctx, {
    meta,
    resume: true,
    produce: async (sink) => {
      const renderer = new BrowserRenderer({ executablePath: config.chromiumPath, policy, timeoutMs, maxPages: config.crawlConcurrency, log: ctx.log });
      const progress = async (force?: boolean) => sink.report(await crawlProgress(store, p, jobId, renderer.rendered, sink.stored), force);
      // The crawler reports as it goes and does not wait; a failed progress write only loses that figure.
      const report = (force?: boolean) => void progress(force).catch((err: unknown) => ctx.log.debug({ err }, 'crawl progress not written'));
      try {
        const crawled = await (await crawler()).crawlSite(
          {
            jobId,
            libraryId: p.libraryId,
            startUrl: p.startUrl,
            scope: scopeFor(p.startUrl, p.excludePatterns),
            maxPages: p.maxPages,
            maxDepth: p.maxDepth,
            respectRobots: p.respectRobots ?? config.crawlRespectRobots,
            policy,
            timeoutMs,
            concurrency: config.crawlConcurrency,
            siteName: site?.siteTitle ?? null,
          },
          {
            frontier: store.crawl,
            renderer,
            signal: ctx.signal,
            log: ctx.log,
            report,
            isCancellation: (err) => err instanceof JobCancelled,
            sink: {
              add: (snippets) => sink.add(snippets),
              get snippetCount() {
                return sink.stored;
              },
            },
            checkCancelled: () => sink.checkCancelled(),
          },
        );
        siteName = crawled.siteName;
      } finally {
        // The last counts, also when the crawl failed or stopped.
        try {
          await progress(true);
        } catch {
          /* the store may be closing */
        }
        await renderer.close();
      }
    },
    nothingIndexed: async () => {
      const first = (await store.crawl.errors(jobId, 1))[0];
      return new Error(`Nothing could be indexed from ${p.startUrl}${first ? `: ${first.url}: ${first.error}` : ' (no documentation content found)'}.`);
    },
    // The site name is known only at the end.
    finalMeta: () => ({ ...meta, title: p.name ?? library?.title ?? siteName ?? meta.title }),
    afterCommit: async (totals) => {
      const pages = (await crawlProgress(store, p, jobId, 0, totals.snippets)).pagesDone;
      await finishSite(deps, p, jobId, siteName);
      ctx.log.info({ libraryId: p.libraryId, pages, snippets: totals.snippets }, 'crawl finished');
    },
  });
}

/** The job's progress, from the frontier's counts. */
async function crawlProgress(store: Pick<Stores, 'crawl'>, p: CrawlPayload, jobId: number, pagesRendered: number, snippets: number): Promise<CrawlProgress> {
  const c = await store.crawl.counts(jobId);
  return {
    pagesDone: c.done + c.unchanged + c.duplicate,
    pagesQueued: c.queued + c.processing,
    pagesFailed: c.failed,
    pagesSkipped: c.skipped,
    pagesDuplicate: c.duplicate,
    pagesUnchanged: c.unchanged,
    pagesRendered,
    snippets,
    errors: await store.crawl.errors(jobId, 10),
    libraryId: p.libraryId,
    startUrl: p.startUrl,
  };
}

/** After the commit: the site's options and schedule, and the frontiers and pages this crawl left behind. */
async function finishSite(deps: CrawlJobDeps, p: CrawlPayload, jobId: number, siteName: string | null): Promise<void> {
  const { store } = deps;
  const now = () => new Date().toISOString();
  await store.crawl.saveSite(
    {
      libraryId: p.libraryId,
      startUrl: p.startUrl,
      schedule: p.schedule,
      options: {
        maxPages: p.maxPages,
        maxDepth: p.maxDepth,
        excludePatterns: p.excludePatterns,
        respectRobots: p.respectRobots,
        name: p.name,
        description: p.description,
      },
      siteTitle: siteName,
      lastJobId: jobId,
      lastCrawledAt: now(),
    },
    now(),
  );
  await store.crawl.purgeFinishedFrontiers(p.libraryId, jobId);
  await store.crawl.prunePages(p.libraryId, jobId);
  if (p.schedule !== undefined) deps.schedulesChanged();
}
