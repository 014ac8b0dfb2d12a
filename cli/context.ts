import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig, type Config } from '../server/config.ts';
import { ApiError } from '../lib/errors.ts';
import { LIBRARY_VISIBILITIES } from '../lib/model.ts';
import { createLogger } from '../server/log.ts';
import { createServices, holdsStacksDatabase, type Services } from '../server/services.ts';
import { LOCAL, type Operations } from '../server/operations/index.ts';

/**
 * What a command gets on the data dir: the operations (called as the local operator, LOCAL or
 * localIn(teamspace)), this process's job queue to work (the CLI runs the jobs it queues), and
 * the staging of uploads (`stacks add files`, as the HTTP upload route has it). Nothing else of the
 * services: every read and change goes through an operation.
 */
export interface Local {
  operations: Operations;
  queue: Pick<Services['jobs'], 'start' | 'idle' | 'stop'>;
  staging: Pick<Services['sources'], 'newStagingDir' | 'removeStaging'>;
}

/** A job as the operations show it (GET /api/jobs/:id). */
export type JobView = Awaited<ReturnType<Operations['jobGet']>>;

/** Options every data-dir command accepts. */
export interface CommonOpts {
  dataDir?: string;
  dev?: boolean;
  json?: boolean;
}

/** --data-dir, --dev and --json: the options every command that works on a data dir accepts. */
export function withDataDir(cmd: Command): Command {
  return withJson(
    cmd
      .option('--data-dir <dir>', 'data directory (env DATA_DIR, default ./data)')
      .option('--dev', 'development mode: accept the development license key (env STACKS_DEV)'),
  );
}

/** --json: machine-readable output on stdout (and errors as one JSON line on stderr). */
export function withJson(cmd: Command): Command {
  return cmd.option('--json', 'print the result as JSON on stdout');
}

/** --visibility of the commands that add a library (an existing library keeps its own; `stacks libraries set` changes it). */
export function visibilityOption(): Option {
  return choiceOption(
    '--visibility <visibility>',
    'who may read a new library: instance (every key, and anonymous search; the default) or teamspace (the default teamspace only)',
    LIBRARY_VISIBILITIES,
  );
}

/** An option whose value must be one of `values` (the parser names the option and the values when it is not). */
export function choiceOption(flags: string, description: string, values: readonly string[], defaultValue?: string): Option {
  const o = new Option(flags, `${description} (${values.join('|')})`).choices(values);
  return defaultValue === undefined ? o : o.default(defaultValue);
}

/** A parser for a whole-number option or argument in [min, max] (the parser names the option when it is not). */
export function intArg(min: number, max = Number.MAX_SAFE_INTEGER): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `Expected a whole number >= ${min}.` : `Expected a whole number from ${min} to ${max}.`);
    }
    return n;
  };
}

export function configFrom(opts: { dataDir?: string; dev?: boolean; port?: string; logLevel?: string }): Config {
  return loadConfig({ dataDir: opts.dataDir, dev: opts.dev || undefined, port: opts.port, logLevel: opts.logLevel });
}

/**
 * Refuses a data dir that holds no Stacks database (a mistyped --data-dir must not look like an
 * empty installation). With STACKS_DATABASE_URL the state is in PostgreSQL, not the data dir.
 */
export function requireStacksDatabase({ dataDir, databaseUrl }: Pick<Config, 'dataDir' | 'databaseUrl'>): void {
  if (!databaseUrl && !holdsStacksDatabase(dataDir)) {
    throw new ApiError('not_found', `${dataDir} holds no Stacks database (stacks.db); check --data-dir or DATA_DIR (\`stacks serve\` creates one).`);
  }
}

export interface ServicesOptions {
  /**
   * The command adds something on purpose (import, crawl, add, keys create, ...) and may create the
   * database of a new installation; it says so on stderr. Otherwise the data dir must hold one.
   */
  create?: boolean;
}

/**
 * Runs a command against the services of a data dir directly (no HTTP to a server). Logs go to
 * stderr at warn level so that command output stays clean.
 */
export async function withServices<T>(opts: { dataDir?: string; dev?: boolean }, fn: (s: Local) => Promise<T> | T, options: ServicesOptions = {}): Promise<T> {
  const config = configFrom(opts);
  if (!options.create) requireStacksDatabase(config);
  else if (!config.databaseUrl && !holdsStacksDatabase(config.dataDir))
    process.stderr.write(`stacks: no Stacks database in ${config.dataDir} yet; creating one.\n`);
  const level = config.logLevel === 'info' ? 'warn' : config.logLevel;
  const services = await createServices({ ...config, logLevel: level }, createLogger(level), {}, { embedOnDemand: true });
  try {
    return await fn({ operations: services.operations, queue: services.jobs, staging: services.sources });
  } finally {
    await services.store.close();
  }
}

/** Works this process's job queue until nothing is queued or running, then stops it (the CLI runs its jobs itself). */
export async function workQueue(s: Local): Promise<void> {
  s.queue.start();
  try {
    await s.queue.idle();
  } finally {
    await s.queue.stop();
  }
}

/** One job, as the local operator sees it. */
export function jobOf(s: Local, id: number): Promise<JobView> {
  return s.operations.jobGet({ id }, LOCAL);
}

/** Snippets and tokens of a library's served documentation (its untagged version), or zeros. */
async function servedFigures(s: Local, libraryId: string): Promise<{ snippets: number; tokens: number }> {
  const view = await s.operations.libraryGet({ libraryId }, LOCAL).catch(() => null);
  const v = view?.versions.find((x) => x.tag === 'current');
  return { snippets: v?.snippets ?? 0, tokens: v?.tokens ?? 0 };
}

/**
 * Submits an indexing job in this process (`stacks add ...`), works the queue until idle and
 * reports the job: the submission with the job's state as JSON, else what was indexed, or the
 * error and the files that failed. The exit code is 1 when the job did not succeed.
 */
export async function runIndexing<R extends { message: string }>(
  opts: CommonOpts,
  submit: (s: Local) => Promise<R>,
  ids: (r: R) => { jobId: number; libraryId: string },
): Promise<void> {
  const ok = await withServices(
    opts,
    async (s) => {
      const result = await submit(s);
      const { jobId, libraryId } = ids(result);
      if (!opts.json) process.stdout.write(`${result.message}\n`);
      await workQueue(s);
      const job = await jobOf(s, jobId);
      if (opts.json) printJson({ ...result, state: job.state, error: job.error, progress: job.progress });
      else if (job.state === 'succeeded') {
        const served = await servedFigures(s, libraryId);
        process.stdout.write(`indexed ${libraryId}: ${served.snippets} snippets, ${served.tokens} tokens\n`);
      } else process.stdout.write(`job ${job.id} ${job.state}: ${job.error ?? ''}\n`);
      // File sources list their files; a Git job's `files` is a count.
      const files = Array.isArray(job.progress.files) ? (job.progress.files as { name: string; state: string; error?: string }[]) : [];
      for (const f of files) if (f.state === 'failed' && !opts.json) process.stdout.write(`  ${f.name}: ${f.error}\n`);
      return job.state === 'succeeded';
    },
    { create: true },
  );
  if (!ok) process.exitCode = 1;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints `value` as JSON with --json, else the text (one or more lines, each ended here). */
export function output(opts: { json?: boolean }, value: unknown, text: () => string | string[]): void {
  if (opts.json) return printJson(value);
  const t = text();
  const lines = Array.isArray(t) ? t : [t];
  if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
}
