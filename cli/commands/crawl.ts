import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { intArg, jobOf, output, printJson, visibilityOption, withDataDir, withServices, type CommonOpts, type JobView, type Local } from '../context.ts';
import { LOCAL } from '../../server/operations/index.ts';

interface CrawlOpts extends CommonOpts {
  maxPages?: number;
  maxDepth?: number;
  exclude?: string[];
  name?: string;
  description?: string;
  force?: boolean;
  robots?: boolean;
  schedule?: string;
  progress?: boolean;
  visibility?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `stacks crawl URL`: the same CrawlService as POST /api/parse-website, run in this process with a
 * live progress bar. Ctrl-C cancels the crawl (the previous version of the site stays served).
 * `stacks crawl-schedule ID [CRON|off]` shows or sets the re-crawl schedule.
 */
export function crawlCommand(program: Command): void {
  withDataDir(
    program
      .command('crawl')
      .description('crawl a documentation website into a library (needs a license)')
      .argument('<url>', 'start URL (the crawl stays under its host and folder)'),
  )
    .option('--max-pages <n>', 'most pages to crawl (1-100000, default 500)', intArg(1, 100_000))
    .option('--max-depth <n>', 'most link hops from the start URL (0-100; default: unlimited, sitemap.xml also used)', intArg(0, 100))
    .option('--exclude <pattern>', 'skip URL paths matching the pattern (a glob such as `/blog/**`, or /regex/); repeatable', collect)
    .option('--name <name>', 'display name of the library')
    .option('--description <text>', 'short description of the library')
    .option('--force', 'crawl again when the site is already indexed')
    .option('--no-robots', 'ignore robots.txt (default: the server setting STACKS_CRAWL_RESPECT_ROBOTS)')
    .option('--schedule <cron>', 're-crawl on this cron schedule when `stacks serve` runs (e.g. "0 3 * * *")')
    .addOption(visibilityOption())
    .option('--no-progress', 'no progress bar')
    .action(async (url: string, opts: CrawlOpts) => {
      const ok = await withServices(opts, (s) => runCrawlCommand(s, url, opts), { create: true });
      if (!ok) process.exitCode = 1;
    });

  withDataDir(
    program
      .command('crawl-schedule')
      .description('show or set the re-crawl schedule of a crawled website library')
      .argument('[libraryId]', 'library ID (/websites/...); omit to list every crawled site')
      .argument('[cron]', 'cron expression, or "off" to remove the schedule'),
  ).action(async (libraryId: string | undefined, expr: string | undefined, opts: CommonOpts) => {
    await withServices(opts, async (s) => {
      if (libraryId && expr) {
        const schedule = expr === 'off' ? null : expr;
        // The same operation as PATCH /api/libraries/{libraryId} with {schedule}.
        await s.operations.libraryUpdate({ libraryId, schedule }, LOCAL);
        output(opts, { libraryId, schedule }, () =>
          schedule === null ? `Schedule of ${libraryId} removed.` : `${libraryId} is re-crawled on "${expr}" while the server runs.`,
        );
        return;
      }
      const { sites } = await s.operations.crawlSites({ libraryId }, LOCAL);
      output(opts, sites, () =>
        sites.map((x) => `${x.libraryId}  ${x.startUrl}  schedule: ${x.schedule ?? 'none'}  last crawl: ${x.lastCrawledAt ?? 'never'}`),
      );
    });
  });
}

async function runCrawlCommand(s: Local, url: string, opts: CrawlOpts): Promise<boolean> {
  // The same operation as POST /api/parse-website: one contract, the license checked inside.
  const queued = await s.operations.parseWebsite(
    {
      websiteUrl: url,
      maxPages: opts.maxPages,
      maxDepth: opts.maxDepth,
      excludePatterns: opts.exclude,
      name: opts.name,
      description: opts.description,
      force: opts.force,
      respectRobots: opts.robots === false ? false : undefined,
      schedule: opts.schedule,
      visibility: opts.visibility,
    },
    LOCAL,
  );
  const sub = { libraryId: queued.project, jobId: queued.queueId };
  if (!opts.json) process.stderr.write(`Crawling ${url} into ${sub.libraryId} (job ${sub.jobId})\n`);
  const tty = process.stderr.isTTY && opts.progress !== false && !opts.json;
  const bar = tty
    ? new cliProgress.SingleBar(
        { format: 'crawling [{bar}] {value}/{total} pages | {failed} failed | {snippets} snippets', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(1, 0, { failed: 0, snippets: 0 });
  let lastLine = 0;
  let job: JobView = await jobOf(s, sub.jobId);
  const tick = () => {
    const p = job.progress as Record<string, number>;
    const done = p.pagesDone ?? 0;
    const total = Math.max(1, done + (p.pagesQueued ?? 0) + (p.pagesFailed ?? 0));
    const value = done + (p.pagesFailed ?? 0);
    if (bar) {
      bar.setTotal(total);
      bar.update(value, { failed: p.pagesFailed ?? 0, snippets: p.snippets ?? 0 });
    } else if (opts.progress !== false && !opts.json && Date.now() - lastLine > 2000) {
      lastLine = Date.now();
      process.stderr.write(`crawled ${value}/${total} pages, ${p.pagesFailed ?? 0} failed, ${p.snippets ?? 0} snippets\n`);
    }
  };
  const onSigint = () => {
    process.stderr.write('\nCancelling the crawl (the previously served version stays)...\n');
    void s.operations.jobCancel({ id: sub.jobId }, LOCAL);
  };
  process.once('SIGINT', onSigint);
  s.queue.start();
  try {
    while (!['succeeded', 'failed', 'cancelled'].includes(job.state)) {
      await new Promise((r) => setTimeout(r, 200));
      job = await jobOf(s, sub.jobId);
      tick();
    }
  } finally {
    process.removeListener('SIGINT', onSigint);
    tick();
    bar?.stop();
    await s.queue.stop();
  }
  job = await jobOf(s, sub.jobId);
  if (opts.json) printJson({ ...job, position: null });
  else if (job.state === 'succeeded') {
    const p = job.progress as Record<string, number>;
    process.stdout.write(
      `Indexed ${sub.libraryId}: ${p.pagesDone} pages (${p.pagesDuplicate ?? 0} duplicates, ${p.pagesUnchanged ?? 0} unchanged, ${p.pagesRendered ?? 0} rendered in the browser), ` +
        `${p.pagesFailed ?? 0} failed, ${p.snippets} snippets.\n`,
    );
  } else process.stdout.write(`Crawl ${job.state}: ${job.error ?? ''}\n`);
  return job.state === 'succeeded';
}
