import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { printJson, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import type { Services } from '../../server/services.ts';
import type { Submitter, SubmissionResult } from '../../server/sources/service.ts';

interface AddOpts extends CommonOpts {
  force?: boolean;
  title?: string;
  description?: string;
  collection?: string;
}

/**
 * `stacks add openapi|llmstxt|files ...`: the same SourceService as POST /api/v2/add/*, run in this
 * process against the data dir (as the default teamspace), then the queue is worked until idle.
 */
export function addCommand(program: Command): void {
  const add = program.command('add').description('add a library from an OpenAPI spec, an llms.txt URL or PDF/DOCX files');
  const common = (cmd: Command) => withDataDir(cmd).option('--force', 'index again and replace a library that already exists');

  common(add.command('openapi').description('an OpenAPI 3.x / Swagger 2.0 spec: http(s) URL or local JSON/YAML file').argument('<url-or-file>'))
    .option('--title <title>', 'library title (files only; default: info.title)')
    .option('--description <text>', 'library description (files only)')
    .action((source: string, opts: AddOpts) =>
      run(opts, (s, who) => {
        if (/^https?:\/\//i.test(source)) return s.sources.submitOpenApiUrl({ url: source, force: !!opts.force }, who);
        const file = existingFile(source);
        return s.sources.submitOpenApiUpload({ fileName: path.basename(file), data: fs.readFileSync(file), title: opts.title, description: opts.description, force: !!opts.force }, who);
      }),
    );

  common(add.command('llmstxt').description('an llms.txt, llms-full.txt or llms-small.txt URL').argument('<url>')).action((url: string, opts: AddOpts) =>
    run(opts, (s, who) => s.sources.submitLlmsTxt({ url, force: !!opts.force }, who)),
  );

  common(add.command('files').description('PDF and DOCX files as one library').argument('<files...>'))
    .option('--collection <name>', 'collection name (the library ID is made from it)')
    .option('--title <title>', 'library title')
    .option('--description <text>', 'library description')
    .action((files: string[], opts: AddOpts) =>
      run(opts, async (s, who) => {
        const dir = s.sources.newStagingDir();
        try {
          const staged = files.map((f, i) => {
            const abs = existingFile(f);
            const target = path.join(dir, `upload-${i}.bin`);
            fs.copyFileSync(abs, target);
            return { path: target, originalName: path.basename(abs), size: fs.statSync(abs).size };
          });
          // Paths below the working directory keep their folders; others are named by their file name.
          const relativePaths = files.map((f) => {
            const rel = path.relative(process.cwd(), path.resolve(f)).split(path.sep).join('/');
            return rel.startsWith('..') || path.isAbsolute(rel) ? path.basename(f) : rel;
          });
          return await s.sources.submitFiles({ stagedDir: dir, files: staged, relativePaths, collectionName: opts.collection, projectTitle: opts.title, description: opts.description, force: !!opts.force }, who);
        } catch (err) {
          s.sources.removeStaging(dir);
          throw err;
        }
      }),
    );
}

function existingFile(f: string): string {
  const abs = path.resolve(f);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) throw new ApiError('validation_error', `No such file: ${f}`);
  return abs;
}

async function run(opts: AddOpts, submit: (s: Services, who: Submitter) => Promise<SubmissionResult>): Promise<void> {
  const ok = await withServices(opts, async (s) => {
    s.license.require();
    const result = await submit(s, { memberId: null, teamspaceId: s.keys.defaultTeamspaceId() });
    if (!opts.json) process.stdout.write(`${result.message}\n`);
    s.jobs.start();
    try {
      await s.jobs.idle();
    } finally {
      await s.jobs.stop();
    }
    const job = s.jobs.get(result.jobId);
    const version = s.store.libraries.currentVersion(result.libraryName, '');
    if (opts.json) printJson({ ...result, state: job.state, error: job.error, progress: job.progress });
    else if (job.state === 'succeeded') process.stdout.write(`indexed ${result.libraryName}: ${version?.totalSnippets ?? 0} snippets, ${version?.totalTokens ?? 0} tokens\n`);
    else process.stdout.write(`job ${job.id} ${job.state}: ${job.error ?? ''}\n`);
    for (const f of (job.progress.files as { name: string; state: string; error?: string }[] | undefined) ?? []) if (f.state === 'failed' && !opts.json) process.stdout.write(`  ${f.name}: ${f.error}\n`);
    return job.state === 'succeeded';
  }, { create: true });
  if (!ok) process.exitCode = 1;
}
