import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../../log.ts';
import type { CrawlService } from './service.ts';
import type { ClusterCron } from '../../jobs/cron.ts';

/** How often the schedule table is re-read (a schedule set by the CLI or API takes effect within this time). */
const RELOAD_MS = 60_000;

/**
 * Background task: one node-cron task per crawled library with a schedule; each firing queues a
 * re-crawl (skipped when a crawl of that library is already queued or running), on one of the
 * nodes sharing the database.
 */
export function startCrawlSchedules(crawler: Pick<CrawlService, 'sites' | 'recrawl' | 'onSchedulesChanged'>, cluster: ClusterCron, log: Logger): () => void {
  const tasks = new Map<string, { expr: string; task: ScheduledTask }>();
  // node-cron's own messages go to the server log, not to the console.
  const logger = {
    info: (m: string) => log.debug({ source: 'node-cron' }, m),
    warn: (m: string) => log.warn({ source: 'node-cron' }, m),
    error: (m: string | Error, err?: Error) => log.error({ source: 'node-cron', err: err?.message }, String(m)),
    debug: (m: string | Error) => log.debug({ source: 'node-cron' }, String(m)),
  };
  // Reloads may overlap (the timer and a change): only the latest one started applies what it read.
  let generation = 0;
  let stopped = false;
  const reload = async () => {
    const mine = ++generation;
    let sites;
    try {
      sites = await crawler.sites();
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'crawl schedules could not be read');
      return;
    }
    if (mine !== generation || stopped) return;
    const wanted = new Map(sites.filter((x) => x.schedule).map((x) => [x.libraryId, x.schedule!]));
    for (const [id, t] of tasks) {
      if (wanted.get(id) !== t.expr) {
        void t.task.destroy();
        tasks.delete(id);
      }
    }
    for (const [id, expr] of wanted) {
      if (tasks.has(id) || !cron.validate(expr)) continue;
      const task = cron.schedule(
        expr,
        async () => {
          try {
            const r = await crawler.recrawl(id, 'schedule');
            if (r) log.info({ libraryId: id, jobId: r.jobId }, 'scheduled re-crawl queued');
          } catch (err) {
            log.warn({ libraryId: id, err: (err as Error).message }, 'scheduled re-crawl not queued');
          }
        },
        { name: `crawl ${id}`, noOverlap: true, unref: true, logger, ...cluster },
      );
      tasks.set(id, { expr, task });
    }
  };
  void reload();
  const timer = setInterval(() => void reload(), RELOAD_MS);
  timer.unref();
  const unsubscribe = crawler.onSchedulesChanged(() => void reload());
  return () => {
    stopped = true;
    unsubscribe();
    clearInterval(timer);
    for (const t of tasks.values()) void t.task.destroy();
    tasks.clear();
  };
}
