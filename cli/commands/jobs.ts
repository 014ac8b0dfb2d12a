import type { Command } from 'commander';
import { choiceOption, intArg, output, printJson, withDataDir, withServices, type CommonOpts, type JobView } from '../context.ts';
import { remoteClient, withRemote, type RemoteOpts } from '../remote.ts';
import { countsText, followJob } from '../job-follow.ts';
import { EXIT_FAILED } from '../errors.ts';
import { LOCAL } from '../../server/operations/index.ts';
import { RemoteError } from '../../server/mcp/backend.ts';
import type { JobState } from '../../lib/model.ts';

const STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
/** How long `jobs follow --url` waits for an instance that went away (a restart) before giving up. */
const REMOTE_AWAY_MS = 30_000;

type FollowOpts = CommonOpts & RemoteOpts & { progress?: boolean };

/** `stacks jobs list|show|cancel|follow`: background jobs of every kind (imports, crawls, sources, ...). */
export function jobsCommand(program: Command): void {
  const jobs = program.command('jobs').description('list, show, cancel and follow background jobs (imports, crawls, ...)');
  withDataDir(jobs.command('list').description('list recent jobs'))
    .addOption(choiceOption('--state <state>', 'only jobs in this state', STATES))
    .option('--kind <kind>', 'job kind, e.g. crawl or import')
    .option('--limit <n>', 'most jobs to list (1-1000)', intArg(1, 1000), 50)
    .action(async (opts: CommonOpts & { state?: JobState; kind?: string; limit: number }) => {
      await withServices(opts, async (s) => {
        const { jobs: list } = await s.operations.jobsList({ state: opts.state, kind: opts.kind, limit: opts.limit }, LOCAL);
        output(opts, list, () =>
          list.length
            ? list.map((j) => `${String(j.id).padStart(5)}  ${j.kind.padEnd(14)} ${j.state.padEnd(10)} ${j.libraryId ?? ''}  ${listDetail(j)}`)
            : 'No jobs.',
        );
      });
    });
  withDataDir(jobs.command('show').description('show one job with its progress (JSON)').argument('<id>', 'job ID', intArg(1))).action(
    async (id: number, opts: CommonOpts) => {
      await withServices(opts, async (s) => printJson(await s.operations.jobGet({ id }, LOCAL)));
    },
  );
  withDataDir(jobs.command('cancel').description('cancel a queued or running job').argument('<id>', 'job ID', intArg(1))).action(
    async (id: number, opts: CommonOpts) => {
      await withServices(opts, async (s) => {
        const job = await s.operations.jobCancel({ id }, LOCAL);
        output(opts, job, () =>
          job.state === 'running' ? `Cancel requested for job ${job.id}; it stops after the step in progress.` : `Job ${job.id} is ${job.state}.`,
        );
      });
    },
  );
  withRemote(
    withDataDir(
      jobs
        .command('follow')
        .description('follow a job started anywhere (API, web UI, another CLI) with a live progress bar until it ends; exit 1 when it failed or was cancelled')
        .argument('<id>', 'job ID', intArg(1)),
    ),
    'GET /api/jobs/:id with a key',
  )
    .option('--no-progress', 'no progress on stderr, only the final state')
    .action(async (id: number, opts: FollowOpts) => {
      const job = opts.url
        ? await followRemote(id, { ...opts, url: opts.url })
        : await withServices(opts, (s) => followJob(() => s.operations.jobGet({ id }, LOCAL), { progress: opts.progress !== false, pollMs: 250 }));
      output(opts, job, () => finalLine(job));
      if (job.state !== 'succeeded') process.exitCode = EXIT_FAILED;
    });
}

async function followRemote(id: number, opts: FollowOpts & { url: string }): Promise<JobView> {
  const api = remoteClient(opts);
  let awaySince: number | null = null;
  return followJob(
    async () => {
      const job = (await (await api.get(`/jobs/${id}`)).json()) as JobView;
      awaySince = null;
      return job;
    },
    {
      progress: opts.progress !== false,
      pollMs: 500,
      // An instance that is briefly away (a restart) is waited for; an error answer (401, 404) ends the command.
      onReadError: (err) => {
        if (!(err instanceof RemoteError) || err.status !== 0) return false;
        awaySince ??= Date.now();
        return Date.now() - awaySince < REMOTE_AWAY_MS;
      },
    },
  );
}

function finalLine(job: JobView): string {
  const what = `Job ${job.id} (${job.kind}${job.libraryId ? ` ${job.libraryId}` : ''})`;
  if (job.state === 'succeeded') return `${what} succeeded.`;
  return `${what} ${job.state}${job.error ? `: ${job.error}` : '.'}`;
}

/** The progress column of `jobs list`. */
function listDetail(j: JobView): string {
  return j.state === 'failed' || j.state === 'cancelled' ? (j.error ?? '') : countsText(j);
}
