import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { runIndexing, visibilityOption, withDataDir, type CommonOpts, type Local } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import type { Operations } from '../../server/operations/index.ts';
import { LOCAL } from '../../server/operations/index.ts';
import { addGitCommand } from './git.ts';

interface AddOpts extends CommonOpts {
  force?: boolean;
  title?: string;
  description?: string;
  collection?: string;
  visibility?: string;
}

/**
 * `stacks add openapi|llmstxt|files ...`: the same operations as POST /api/v2/add/* (one contract,
 * the license checked inside), run in this process against the data dir (as the default
 * teamspace), then the queue is worked until idle.
 */
export function addCommand(program: Command): void {
  const add = program.command('add').description('add a library from a Git repository, an OpenAPI spec, an llms.txt URL or PDF/DOCX files');
  addGitCommand(add);
  const common = (cmd: Command) => withDataDir(cmd).option('--force', 'index again and replace a library that already exists').addOption(visibilityOption());

  common(add.command('openapi').description('an OpenAPI 3.x / Swagger 2.0 spec: http(s) URL or local JSON/YAML file').argument('<url-or-file>'))
    .option('--title <title>', 'library title (files only; default: info.title)')
    .option('--description <text>', 'library description (files only)')
    .action((source: string, opts: AddOpts) =>
      run(opts, (s) => {
        if (/^https?:\/\//i.test(source)) return s.operations.addOpenApi({ openApiUrl: source, force: !!opts.force, visibility: opts.visibility }, LOCAL);
        const file = existingFile(source);
        return s.operations.addOpenApiUpload(
          { libraryTitle: opts.title, description: opts.description, force: !!opts.force, visibility: opts.visibility },
          { name: path.basename(file), data: fs.readFileSync(file) },
          LOCAL,
        );
      }),
    );

  common(add.command('llmstxt').description('an llms.txt, llms-full.txt or llms-small.txt URL').argument('<url>')).action((url: string, opts: AddOpts) =>
    run(opts, (s) => s.operations.addLlmsTxt({ llmstxtUrl: url, force: !!opts.force, visibility: opts.visibility }, LOCAL)),
  );

  common(add.command('files').description('PDF and DOCX files as one library').argument('<files...>'))
    .option('--collection <name>', 'collection name (the library ID is made from it)')
    .option('--title <title>', 'library title')
    .option('--description <text>', 'library description')
    .action((files: string[], opts: AddOpts) =>
      run(opts, async (s) => {
        const dir = s.staging.newStagingDir();
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
          const fields = {
            collectionName: opts.collection,
            projectTitle: opts.title,
            description: opts.description,
            relativePaths: JSON.stringify(relativePaths),
            force: !!opts.force,
            visibility: opts.visibility,
          };
          return await s.operations.addFiles(fields, { dir, files: staged }, LOCAL);
        } catch (err) {
          s.staging.removeStaging(dir);
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

/** Runs one submission of `stacks add` to the end (cli/context.ts runIndexing). */
/** What every source's operation answers (POST /api/v2/add/...). */
type SubmissionResult = Awaited<ReturnType<Operations['addLlmsTxt']>>;

function run(opts: AddOpts, submit: (s: Local) => Promise<SubmissionResult>): Promise<void> {
  return runIndexing(opts, submit, (r) => ({ jobId: r.jobId, libraryId: r.libraryName }));
}
