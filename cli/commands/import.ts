import path from 'node:path';
import fs from 'node:fs';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { jobOf, printJson, visibilityOption, withDataDir, withServices, type CommonOpts, type JobView, type Local } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import { LOCAL, type Operations } from '../../server/operations/index.ts';

type ImportResult = Awaited<ReturnType<Operations['importLibraries']>>;

interface ImportOpts extends CommonOpts {
  force?: boolean;
  progress?: boolean;
  visibility?: string;
}

/**
 * `stacks import FILE [--force]`: the same ImportService as POST /api/import-libraries, run in
 * this process: stage and queue, then work the queue until idle with a progress bar.
 */
export function importCommand(program: Command): void {
  withDataDir(program.command('import').description('import a bundle file (JSON or .zip of JSON bundles) into the data dir').argument('<file>'))
    .option('--force', 'replace libraries (and versions) that already exist')
    .addOption(visibilityOption())
    .option('--no-progress', 'no progress bar')
    .action(async (file: string, opts: ImportOpts) => {
      const abs = path.resolve(file);
      if (!fs.existsSync(abs)) throw new ApiError('validation_error', `No such file: ${file}`);
      const failed = await withServices(opts, (s) => runImport(s, abs, opts), { create: true });
      if (failed > 0) process.exitCode = 1;
    });
}

async function runImport(s: Local, file: string, opts: ImportOpts): Promise<number> {
  // The same operation as POST /api/import-libraries: one contract, the license checked inside.
  const result = await s.operations.importLibraries({ force: opts.force ? true : undefined, visibility: opts.visibility }, file, LOCAL);
  if (!opts.json) {
    process.stdout.write(`${result.message}\n`);
    for (const k of result.skipped) process.stdout.write(`  skipped ${k.project}: ${k.reason}\n`);
  }
  const ids = result.jobs.map((j) => j.jobId);
  const total = result.jobs.reduce((n, j) => n + j.snippets, 0);
  const showBar = ids.length > 0 && opts.progress !== false && !opts.json && process.stderr.isTTY;
  const bar = showBar
    ? new cliProgress.SingleBar(
        { format: 'importing [{bar}] {percentage}% | {value}/{total} snippets | {lib}', stream: process.stderr },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(total, 0, { lib: '' });
  const tick = async () => {
    let done = 0;
    let lib = '';
    for (const id of ids) {
      const job = await jobOf(s, id);
      const n = Number(job.progress.snippets ?? 0);
      done += job.state === 'succeeded' ? Number(job.progress.total ?? n) : n;
      if (job.state === 'running') lib = job.libraryId ?? '';
    }
    bar?.update(done, { lib });
  };
  const timer = bar ? setInterval(() => void tick(), 200) : null;
  s.queue.start();
  try {
    await s.queue.idle();
  } finally {
    if (timer) clearInterval(timer);
    if (bar) await tick();
    bar?.stop();
    await s.queue.stop();
  }
  return report(result, await Promise.all(ids.map((id) => jobOf(s, id))), opts);
}

function report(result: ImportResult, jobs: JobView[], opts: ImportOpts): number {
  const failed = jobs.filter((j) => j.state !== 'succeeded');
  if (opts.json) {
    printJson({ ...result, results: jobs.map((j) => ({ jobId: j.id, libraryId: j.libraryId, state: j.state, error: j.error, progress: j.progress })) });
    return failed.length;
  }
  for (const j of jobs) {
    const p = { project: result.jobs.find((x) => x.jobId === j.id)?.project };
    if (j.state === 'succeeded')
      process.stdout.write(
        `  imported ${p.project ?? j.libraryId}: ${String(j.progress.stored ?? '?')} snippets, ${String(j.progress.tokens ?? '?')} tokens\n`,
      );
    else process.stdout.write(`  FAILED ${p.project ?? j.libraryId}: ${j.error ?? j.state}\n`);
  }
  return failed.length;
}
