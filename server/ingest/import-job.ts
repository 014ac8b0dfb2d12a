import fs from 'node:fs';
import readline from 'node:readline';
import type { Logger } from '../log.ts';
import type { JobContext, JobQueue } from '../jobs/queue.ts';
import type { SnippetInput } from '../../lib/model.ts';
import { runVersionJob, type VersionJobDeps, type VersionSink } from './version-job.ts';
import { bundleMeta, codeSnippetInput, infoSnippetInput, type BundleCodeSnippet, type BundleInfoSnippet } from './bundle.ts';
import { IMPORT_JOB, type ImportJobPayload, type ImportService } from './import-service.ts';

const BATCH = 2000;

/** Background task: sweeps abandoned uploads and staged files at start and hourly. */
export function importSweepTask(importer: Pick<ImportService, 'sweep'>, log: Logger): () => void {
  const run = () => void importer.sweep().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'import sweep failed'));
  run();
  const timer = setInterval(run, 3600_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The 'import' job: streams a staged file into a new library version (runVersionJob: swapped in
 * at the end, thrown away on failure or cancel, rerun from the start after a crash).
 */
export function registerImportJob(jobs: Pick<JobQueue, 'register'>, deps: ImportJobDeps): void {
  jobs.register<ImportJobPayload>(IMPORT_JOB, (ctx) => runImport(deps, ctx));
}

/** What an import job needs: its staged file (on this node or fetched), the writer and the store (the version-build frame). */
export interface ImportJobDeps extends VersionJobDeps {
  importer: Pick<ImportService, 'obtainStaged' | 'forgetStaged'>;
}

async function runImport(s: ImportJobDeps, ctx: JobContext<ImportJobPayload>): Promise<void> {
  const p = ctx.job.payload;
  // Asynchronous first: the job may be claimed inside the transaction that queued it.
  const file = await s.importer.obtainStaged(p);
  if (file === null) throw new Error(`The staged bundle file ${p.file} is missing; upload the bundle again.`);
  const totals = await runVersionJob(s, ctx, {
    meta: { ...bundleMeta(p.header, p.libraryId), teamspaceId: p.teamspaceId ?? null, visibility: p.visibility },
    tag: p.tag,
    // No resume: the staged file is immutable, so a rerun after a crash starts the build over exactly.
    produce: (sink) => readStaged(file, p, sink),
    cleanup: async () => {
      await fs.promises.rm(file, { force: true });
      await s.importer.forgetStaged(p);
    },
  });
  ctx.log.info({ libraryId: p.libraryId, tag: p.tag, ...totals }, 'library imported');
}

/** Streams the staged file's lines into the build. */
async function readStaged(file: string, p: ImportJobPayload, sink: VersionSink): Promise<void> {
  sink.report({ snippets: 0, total: p.snippets, stored: 0 }, true);
  let lines = 0;
  let batch: SnippetInput[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const current = batch;
    batch = [];
    await sink.add(current);
    sink.report({ snippets: lines, total: p.snippets, stored: sink.stored });
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
  sink.report({ snippets: lines, total: p.snippets, stored: sink.stored }, true);
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
