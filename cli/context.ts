import fs from 'node:fs';
import path from 'node:path';
import { openSqlite } from '../lib/sqlite.ts';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig, type Config } from '../server/config.ts';
import { ApiError } from '../lib/errors.ts';
import { LIBRARY_VISIBILITIES } from '../lib/model.ts';
import { createLogger } from '../server/log.ts';
import { createServices, type Services } from '../server/services.ts';
import { operatorActor, safeDetail } from '../server/audit/log.ts';

/** Options every data-dir command accepts. */
export interface CommonOpts {
  dataDir?: string;
  dev?: boolean;
  json?: boolean;
}

/** --data-dir, --dev and --json: the options every command that works on a data dir accepts. */
export function withDataDir(cmd: Command): Command {
  return withJson(cmd.option('--data-dir <dir>', 'data directory (env DATA_DIR, default ./data)').option('--dev', 'development mode: accept the development license key (env STACKS_DEV)'));
}

/** --json: machine-readable output on stdout (and errors as one JSON line on stderr). */
export function withJson(cmd: Command): Command {
  return cmd.option('--json', 'print the result as JSON on stdout');
}

/** --visibility of the commands that add a library (an existing library keeps its own; `stacks libraries set` changes it). */
export function visibilityOption(): Option {
  return choiceOption('--visibility <visibility>', 'who may read a new library: instance (every key, and anonymous search; the default) or teamspace (the default teamspace only)', LIBRARY_VISIBILITIES);
}

/**
 * Runs a change the CLI makes on the box without going through an operation, and records it in
 * the audit log as the operator's (in `teamspaceId`'s log when it changes one teamspace).
 */
export function recorded<T>(s: Services, what: { action: string; target?: string | null; teamspaceId?: number | null; detail?: Record<string, unknown> }, change: () => T): T {
  const actor = { ...operatorActor(), teamspaceId: what.teamspaceId ?? null };
  const detail = safeDetail(what.detail ?? null);
  const ok = <R>(result: R): R => {
    s.audit.record({ actor, action: what.action, target: what.target ?? null, outcome: 'ok', detail });
    return result;
  };
  const failed = (err: unknown): never => {
    s.audit.record({ actor, action: what.action, target: what.target ?? null, outcome: 'failed', detail: { ...detail, error: err instanceof ApiError ? err.code : 'internal_error' } });
    throw err;
  };
  try {
    const result = change();
    // An async change is recorded when it settles.
    return (result instanceof Promise ? result.then(ok, failed) : ok(result)) as T;
  } catch (err) {
    return failed(err);
  }
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

/** Whether `dataDir` holds a Stacks database: a stacks.db SQLite file with the migrations table. */
export function hasStacksDatabase(dataDir: string): boolean {
  const file = path.join(dataDir, 'stacks.db');
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return false;
  try {
    const db = openSqlite(file, { readonly: true, fileMustExist: true });
    try {
      return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/** Refuses a data dir that holds no Stacks database (a mistyped --data-dir must not look like an empty installation). */
export function requireStacksDatabase(dataDir: string): void {
  if (!hasStacksDatabase(dataDir)) {
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
export async function withServices<T>(opts: { dataDir?: string; dev?: boolean }, fn: (s: Services) => Promise<T> | T, options: ServicesOptions = {}): Promise<T> {
  const config = configFrom(opts);
  if (!options.create) requireStacksDatabase(config.dataDir);
  else if (!hasStacksDatabase(config.dataDir)) process.stderr.write(`stacks: no Stacks database in ${config.dataDir} yet; creating one.\n`);
  const level = config.logLevel === 'info' ? 'warn' : config.logLevel;
  const services = await createServices({ ...config, logLevel: level }, createLogger(level), {}, { embedOnDemand: true });
  try {
    return await fn(services);
  } finally {
    services.store.close();
  }
}

/** Works this process's job queue until nothing is queued or running, then stops it (the CLI runs its jobs itself). */
export async function workQueue(s: Services): Promise<void> {
  s.jobs.start();
  try {
    await s.jobs.idle();
  } finally {
    await s.jobs.stop();
  }
}

/**
 * Submits an indexing job in this process (`stacks add ...`), works the queue until idle and
 * reports the job: the submission with the job's state as JSON, else what was indexed, or the
 * error and the files that failed. The exit code is 1 when the job did not succeed.
 */
export async function runIndexing<R extends { message: string }>(opts: CommonOpts, submit: (s: Services) => Promise<R>, ids: (r: R) => { jobId: number; libraryId: string }): Promise<void> {
  const ok = await withServices(opts, async (s) => {
    const result = await submit(s);
    const { jobId, libraryId } = ids(result);
    if (!opts.json) process.stdout.write(`${result.message}\n`);
    await workQueue(s);
    const job = s.jobs.get(jobId);
    const version = s.store.libraries.currentVersion(libraryId, '');
    if (opts.json) printJson({ ...result, state: job.state, error: job.error, progress: job.progress });
    else if (job.state === 'succeeded') process.stdout.write(`indexed ${libraryId}: ${version?.totalSnippets ?? 0} snippets, ${version?.totalTokens ?? 0} tokens\n`);
    else process.stdout.write(`job ${job.id} ${job.state}: ${job.error ?? ''}\n`);
    // File sources list their files; a Git job's `files` is a count.
    const files = Array.isArray(job.progress.files) ? (job.progress.files as { name: string; state: string; error?: string }[]) : [];
    for (const f of files) if (f.state === 'failed' && !opts.json) process.stdout.write(`  ${f.name}: ${f.error}\n`);
    return job.state === 'succeeded';
  }, { create: true });
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
