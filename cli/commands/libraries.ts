import type { Command } from 'commander';
import { choiceOption, jobOf, output, printJson, withDataDir, withServices, workQueue, type CommonOpts } from '../context.ts';
import { LIBRARY_VISIBILITIES } from '../../lib/model.ts';
import { LOCAL } from '../../server/operations/index.ts';

export function librariesCommand(program: Command): void {
  const libs = program.command('libraries').description('list, show, delete indexed libraries and set who may read them');
  withDataDir(libs.command('list').description('list libraries with their served versions')).action(async (opts: CommonOpts) => {
    await withServices(opts, async (s) => {
      const { libraries } = await s.operations.librariesList({}, LOCAL);
      const rows = libraries.map((l) => ({
        id: l.id,
        title: l.title,
        sourceType: l.sourceType,
        teamspace: l.teamspace ?? '?',
        visibility: l.visibility,
        grants: l.grants ?? [],
        versions: l.versions.map((v) => ({ tag: v.tag, snippets: v.snippets, tokens: v.tokens })),
      }));
      output(opts, rows, () =>
        rows.map(
          (r) =>
            `${r.id}  ${r.title}  [${r.sourceType}]  ${r.visibility === 'instance' ? 'instance' : `teamspace ${r.teamspace}${r.grants.length ? ` +${r.grants.join(',')}` : ''}`}  ${r.versions.map((v) => `${v.tag}: ${v.snippets} snippets`).join(', ') || 'no served version yet'}`,
        ),
      );
    });
  });
  withDataDir(libs.command('show').description('show one library (JSON)').argument('<id>')).action(async (id: string, opts: CommonOpts) => {
    await withServices(opts, async (s) => printJson(await s.operations.libraryRecord({ libraryId: id }, LOCAL)));
  });
  setCommand(libs);
  withDataDir(
    libs
      .command('refresh')
      .description('index a library again from its source: refresh a Git repository (changed files only), re-crawl a website')
      .argument('<id>'),
  ).action(async (id: string, opts: CommonOpts) => {
    await withServices(opts, async (s) => {
      const r = await s.operations.libraryRefresh({ libraryId: id }, LOCAL);
      process.stderr.write(`${r.message}\n`);
      await workQueue(s);
      const job = await jobOf(s, r.jobId);
      output(
        opts,
        { ...r, state: job.state, error: job.error, progress: job.progress },
        () => `job ${job.id} ${job.state}${job.error ? `: ${job.error}` : ''}`,
      );
      if (job.state !== 'succeeded') process.exitCode = 1;
    });
  });
  withDataDir(libs.command('delete').description('delete a library and all its versions').argument('<id>')).action(async (id: string, opts: CommonOpts) => {
    await withServices(opts, async (s) => {
      await s.operations.libraryDelete({ libraryId: id }, LOCAL);
      output(opts, { id, deleted: true }, () => `Deleted ${id}.`);
    });
  });
}

/** `stacks libraries set`: who may read a library and its trust metadata (as PATCH /api/libraries/<id>). */
function setCommand(libs: Command): void {
  withDataDir(libs.command('set').description('set who may read a library (as PATCH /api/libraries/<id>)').argument('<id>'))
    .addOption(
      choiceOption(
        '--visibility <visibility>',
        'teamspace: its owner teamspace and granted ones; instance: every key and anonymous search',
        LIBRARY_VISIBILITIES,
      ),
    )
    .option('--grants <names>', 'comma-separated teamspaces that may read it besides its owner (replaces the list; "" clears it)')
    .option('--stars <n>', 'trust metadata: a star count ("" clears it)')
    .option('--trust-score <n>', 'trust metadata: 0-10 ("" clears it)')
    .addOption(choiceOption('--verified <yes-or-no>', 'trust metadata: reviewed by an admin', ['true', 'false']))
    .option('--license <spdx>', 'trust metadata: SPDX identifier, e.g. MIT ("" clears it; a Git repository\'s is then detected again)')
    .action(
      async (
        id: string,
        opts: CommonOpts & { visibility?: string; grants?: string; stars?: string; trustScore?: string; verified?: string; license?: string },
      ) => {
        await withServices(opts, async (s) => {
          const grants =
            opts.grants === undefined
              ? undefined
              : opts.grants
                  .split(',')
                  .map((g) => g.trim())
                  .filter(Boolean);
          const orNull = (v: string | undefined) => (v === undefined ? undefined : v.trim() === '' ? null : v);
          const input = {
            libraryId: id,
            visibility: opts.visibility,
            grants,
            stars: orNull(opts.stars),
            trustScore: orNull(opts.trustScore),
            verified: opts.verified,
            license: orNull(opts.license),
          };
          const view = await s.operations.libraryUpdate(input, LOCAL);
          const trust = [
            view.stars !== null && `${view.stars} stars`,
            view.trustScore !== null && `trust ${view.trustScore}`,
            view.verified && 'verified',
            view.license && `license ${view.license}`,
          ]
            .filter(Boolean)
            .join(', ');
          output(
            opts,
            view,
            () =>
              `${view.id}: visible to ${view.visibility === 'instance' ? 'the whole instance' : `teamspace ${view.teamspace}${view.grants?.length ? ` and ${view.grants.join(', ')}` : ''}`}${trust ? `; ${trust}` : ''}.`,
          );
        });
      },
    );
}
