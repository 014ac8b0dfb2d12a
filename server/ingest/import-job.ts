import fs from 'node:fs';
import readline from 'node:readline';
import type { Logger } from '../log.ts';
import type { JobContext, JobQueue } from '../jobs/queue.ts';
import { JobCancelled, throwIfCancelled } from '../jobs/queue.ts';
import type { SnippetInput } from '../../lib/model.ts';
import type { LibraryWriter, VersionBuild } from './writer.ts';
import { bundleMeta, codeSnippetInput, infoSnippetInput, type BundleCodeSnippet, type BundleInfoSnippet } from './bundle.ts';
import { IMPORT_JOB, type ImportJobPayload, type ImportService } from './import-service.ts';

const BATCH = 2000;

/** Background task: sweeps abandoned uploads and staged files at start and hourly. */
export function importSweepTask(importer: Pick<ImportService, 'sweep'>, log: Logger): () => void {
  const run = () => {
    try {
      importer.sweep();
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'import sweep failed');
    }
  };
  run();
  const timer = setInterval(run, 3600_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The 'import' job: streams a staged file into a new library version and swaps it in at the end.
 * No resume: a rerun after a crash starts the build over (begin() drops the job's unfinished
 * build), which is exact because the staged file is immutable. The served version is replaced
 * only by commit(); any failure aborts the build and leaves it untouched.
 */
export function registerImportJob(jobs: Pick<JobQueue, 'register'>, deps: ImportJobDeps): void {
  jobs.register<ImportJobPayload>(IMPORT_JOB, (ctx) => runImport(deps, ctx));
}

/** What an import job needs: the staged file's path and the writer. */
export interface ImportJobDeps {
  importer: Pick<ImportService, 'stagedPath'>;
  writer: Pick<LibraryWriter, 'begin'>;
}

async function runImport(s: ImportJobDeps, ctx: JobContext<ImportJobPayload>): Promise<void> {
  const p = ctx.job.payload;
  const file = s.importer.stagedPath(p);
  // Yield first: the job may be claimed inside the transaction that queued it.
  await fs.promises.access(file).catch(() => {
    throw new Error(`The staged bundle file ${p.file} is missing; upload the bundle again.`);
  });
  let build: VersionBuild | null = null;
  let done = false;
  try {
    throwIfCancelled(ctx.signal);
    build = s.writer.begin(bundleMeta(p.header, p.libraryId), { tag: p.tag, jobId: ctx.job.id });
    ctx.progress({ snippets: 0, total: p.snippets, stored: 0 });
    let lines = 0;
    let batch: SnippetInput[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const current = batch;
      batch = [];
      await build!.add(current);
      ctx.progress({ snippets: lines, total: p.snippets, stored: build!.snippetCount });
      throwIfCancelled(ctx.signal);
    };
    const input = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
    const rl = readline.createInterface({ input, crlfDelay: Infinity });
    try {
      for await (const line of rl) {
        if (line.length === 0) continue;
        lines++;
        batch.push(parseLine(line, lines));
        if (batch.length >= BATCH) await flush();
      }
    } finally {
      rl.close();
      input.destroy();
    }
    await flush();
    if (lines !== p.snippets) throw new Error(`The staged bundle file ${p.file} holds ${lines} snippets, expected ${p.snippets}; upload the bundle again.`);
    throwIfCancelled(ctx.signal);
    const totals = build.commit();
    ctx.progress({ snippets: lines, total: p.snippets, stored: totals.snippets, tokens: totals.tokens });
    ctx.log.info({ libraryId: p.libraryId, tag: p.tag, ...totals }, 'library imported');
    done = true;
  } catch (err) {
    // Shutdown (not cancel): leave the build and the staged file for the rerun after restart.
    const shutdown = ctx.signal.aborted && !(ctx.signal.reason instanceof JobCancelled) && !(err instanceof JobCancelled);
    if (shutdown) throw err;
    build?.abort();
    done = true;
    throw err;
  } finally {
    if (done) await fs.promises.rm(file, { force: true });
  }
}

function parseLine(line: string, n: number): SnippetInput {
  const kind = line[0];
  let value: unknown;
  try {
    value = JSON.parse(line.slice(1));
  } catch {
    throw new Error(`The staged bundle file is damaged at line ${n}; upload the bundle again.`);
  }
  if (kind === 'c') return codeSnippetInput(value as BundleCodeSnippet);
  if (kind === 'i') return infoSnippetInput(value as BundleInfoSnippet);
  throw new Error(`The staged bundle file is damaged at line ${n}; upload the bundle again.`);
}
