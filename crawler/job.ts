import type { Services } from '../server/services.ts';
import { runCrawl, type CrawlPayload } from './crawl.ts';
import { CRAWL_JOB } from './service.ts';

/** Registers the crawl job handler (jobs of kind 'crawl'; a job requeued after a restart resumes its frontier). */
export function registerCrawlJob(s: Services): void {
  s.jobs.register<CrawlPayload>(CRAWL_JOB, (ctx) => runCrawl(s, ctx));
}
