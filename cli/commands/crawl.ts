import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { printJson, withDataDir, withServices } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import type { Services } from '../../server/services.ts';
import type { Job, JobState } from '../../lib/model.ts';
import { validateSchedule } from '../../server/sources/website/service.ts';

interface CrawlOpts {
  dataDir?: string;
  dev?: boolean;
  maxPages?: string;
  maxDepth?: string;
  exclude?: string[];
  name?: string;
  description?: string;
  force?: boolean;
  robots?: boolean;
  schedule?: string;
  json?: boolean;
  progress?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function int(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ApiError('validation_error', `--${name} must be an integer from ${min} to ${max}.`);
  return n;
}

/**
 * `stacks crawl URL`: the same CrawlService as POST /api/parse-website, run in this process with a
 * live progress bar. Ctrl-C cancels the crawl (the previous version of the site stays served).
 * `stacks crawl-schedule ID [CRON|off]` shows or sets the re-crawl schedule; `stacks jobs ...` lists,
 * shows and cancels background jobs of every kind.
 */
export function crawlCommand(program: Command): void {
  withDataDir(program.command('crawl').description('crawl a documentation website into a library (needs a license)').argument('<url>', 'start URL (the crawl stays under its host and folder)'))
    .option('--max-pages <n>', 'most pages to crawl (default 500)')
    .option('--max-depth <n>', 'most link hops from the start URL (default: unlimited, sitemap.xml also used)')
    .option('--exclude <pattern>', 'skip URL paths matching the pattern (`*` wildcard or /regex/); repeatable', collect)
    .option('--name <name>', 'display name of the library')
    .option('--description <text>', 'short description of the library')
    .option('--force', 'crawl again when the site is already indexed')
    .option('--no-robots', 'ignore robots.txt (default: the server setting STACKS_CRAWL_RESPECT_ROBOTS)')
    .option('--schedule <cron>', 're-crawl on this cron schedule when `stacks serve` runs (e.g. "0 3 * * *")')
    .option('--json', 'print the finished job as JSON')
    .option('--no-progress', 'no progress bar')
    .action(async (url: string, opts: CrawlOpts) => {
      const ok = await withServices(opts, (s) => runCrawlCommand(s, url, opts));
      if (!ok) process.exitCode = 1;
    });

  withDataDir(
    program
      .command('crawl-schedule')
      .description('show or set the re-crawl schedule of a crawled website library')
      .argument('[libraryId]', 'library ID (/websites/...); omit to list every crawled site')
      .argument('[cron]', 'cron expression, or "off" to remove the schedule'),
  ).action(async (libraryId: string | undefined, expr: string | undefined, opts: { dataDir?: string; dev?: boolean }) => {
    await withServices(opts, (s) => {
      if (libraryId && expr) {
        s.crawler.setSchedule(libraryId, expr === 'off' ? null : expr);
        process.stdout.write(expr === 'off' ? `Schedule of ${libraryId} removed.\n` : `${libraryId} is re-crawled on "${expr}" while the server runs.\n`);
        return;
      }
      const sites = s.crawler.sites().filter((x) => !libraryId || x.libraryId === libraryId);
      if (libraryId && sites.length === 0) throw new ApiError('library_not_found', `${libraryId} is not a crawled website.`);
      for (const x of sites) process.stdout.write(`${x.libraryId}  ${x.startUrl}  schedule: ${x.schedule ?? 'none'}  last crawl: ${x.lastCrawledAt ?? 'never'}\n`);
    });
  });

  const jobs = program.command('jobs').description('list, show and cancel background jobs (imports, crawls, ...)');
  withDataDir(jobs.command('list').description('list recent jobs'))
    .option('--state <state>', 'queued|running|succeeded|failed|cancelled')
    .option('--kind <kind>', 'job kind, e.g. crawl or import')
    .option('--limit <n>', 'most jobs to list', '50')
    .option('--json', 'print JSON')
    .action(async (opts: { dataDir?: string; dev?: boolean; state?: string; kind?: string; limit: string; json?: boolean }) => {
      const states = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
      if (opts.state && !states.includes(opts.state)) throw new ApiError('validation_error', `--state must be one of ${states.join(', ')}.`);
      await withServices(opts, (s) => {
        const list = s.jobs.list({ state: opts.state as JobState | undefined, kind: opts.kind, limit: int('limit', opts.limit, 1, 1000) });
        if (opts.json) return printJson(list.map(jobSummary));
        if (list.length === 0) process.stdout.write('No jobs.\n');
        for (const j of list) process.stdout.write(`${String(j.id).padStart(5)}  ${j.kind.padEnd(14)} ${j.state.padEnd(10)} ${j.libraryId ?? ''}  ${progressLine(j)}\n`);
      });
    });
  withDataDir(jobs.command('show').description('show one job with its progress').argument('<id>')).action(async (id: string, opts: { dataDir?: string; dev?: boolean }) => {
    await withServices(opts, (s) => printJson(jobSummary(s.jobs.get(int('id', id, 1, Number.MAX_SAFE_INTEGER)!))));
  });
  withDataDir(jobs.command('cancel').description('cancel a queued or running job').argument('<id>')).action(async (id: string, opts: { dataDir?: string; dev?: boolean }) => {
    await withServices(opts, (s) => {
      const job = s.jobs.cancel(int('id', id, 1, Number.MAX_SAFE_INTEGER)!);
      process.stdout.write(
        job.state === 'running' ? `Cancel requested for job ${job.id}; it stops after the page in progress.\n` : `Job ${job.id} is ${job.state}.\n`,
      );
    });
  });
}

function jobSummary(j: Job) {
  return {
    id: j.id, kind: j.kind, state: j.state, libraryId: j.libraryId, progress: j.progress, error: j.error, attempts: j.attempts,
    createdAt: j.createdAt, startedAt: j.startedAt, finishedAt: j.finishedAt,
  };
}

function progressLine(j: Job): string {
  const p = j.progress as Record<string, unknown>;
  if (typeof p.pagesDone === 'number') return `${p.pagesDone} pages, ${String(p.pagesFailed ?? 0)} failed, ${String(p.snippets ?? 0)} snippets`;
  return j.error ?? '';
}

async function runCrawlCommand(s: Services, url: string, opts: CrawlOpts): Promise<boolean> {
  s.license.require('crawl');
  if (opts.schedule) validateSchedule(opts.schedule);
  const sub = await s.crawler.submit(
    {
      websiteUrl: url, maxPages: int('max-pages', opts.maxPages, 1, 100_000), maxDepth: int('max-depth', opts.maxDepth, 0, 100) ?? null,
      excludePatterns: opts.exclude ?? [], name: opts.name ?? null, description: opts.description ?? null, force: opts.force ?? false,
      respectRobots: opts.robots === false ? false : null, schedule: opts.schedule, trigger: 'cli',
    },
    null,
  );
  if (!opts.json) process.stderr.write(`Crawling ${url} into ${sub.libraryId} (job ${sub.jobId})${sub.recrawl ? ', re-crawl' : ''}\n`);
  const tty = process.stderr.isTTY && opts.progress !== false && !opts.json;
  const bar = tty
    ? new cliProgress.SingleBar(
        { format: 'crawling [{bar}] {value}/{total} pages | {failed} failed | {snippets} snippets', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(1, 0, { failed: 0, snippets: 0 });
  let lastLine = 0;
  const tick = () => {
    const p = s.jobs.get(sub.jobId).progress as Record<string, number>;
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
  const timer = setInterval(tick, 200);
  const onSigint = () => {
    process.stderr.write('\nCancelling the crawl (the previously served version stays)...\n');
    s.jobs.cancel(sub.jobId);
  };
  process.once('SIGINT', onSigint);
  s.jobs.start();
  try {
    while (!['succeeded', 'failed', 'cancelled'].includes(s.jobs.get(sub.jobId).state)) await new Promise((r) => setTimeout(r, 200));
  } finally {
    clearInterval(timer);
    process.removeListener('SIGINT', onSigint);
    tick();
    bar?.stop();
    await s.jobs.stop();
  }
  const job = s.jobs.get(sub.jobId);
  if (opts.json) printJson(jobSummary(job));
  else if (job.state === 'succeeded') {
    const p = job.progress as Record<string, number>;
    process.stdout.write(
      `Indexed ${sub.libraryId}: ${p.pagesDone} pages (${p.pagesDuplicate ?? 0} duplicates, ${p.pagesUnchanged ?? 0} unchanged, ${p.pagesRendered ?? 0} rendered in the browser), ` +
        `${p.pagesFailed ?? 0} failed, ${p.snippets} snippets.\n`,
    );
  } else process.stdout.write(`Crawl ${job.state}: ${job.error ?? ''}\n`);
  return job.state === 'succeeded';
}
