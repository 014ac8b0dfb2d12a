import type { Command } from 'commander';
import { output, withDataDir, withServices, workQueue, type CommonOpts } from '../context.ts';
import { LOCAL } from '../../server/operations/index.ts';

/** `stacks sources reconcile`: the same reconcile as POST /api/sources/reconcile, then the queued jobs run here (unless --no-wait). */
export function sourcesCommand(program: Command): void {
  const sources = program.command('sources').description('declarative sources: <data dir>/sources.yaml');
  withDataDir(sources.command('reconcile').description('make the instance match sources.yaml (create, update, prune); an invalid file changes nothing'))
    .option('--no-wait', 'queue the jobs and return (a running server works them)')
    .action(async (opts: CommonOpts & { wait?: boolean }) => {
      await withServices(opts, async (s) => {
        const r = await s.operations.sourcesReconcile({}, LOCAL);
        output(opts, r, () =>
          r.found
            ? [
                `${r.file}: ${r.created.length} created, ${r.updated.length} updated, ${r.unchanged.length} unchanged, ${r.pruned.length} pruned${r.adopted.length ? `, ${r.adopted.length} adopted` : ''}${r.released.length ? `, ${r.released.length} released` : ''}.`,
                ...r.errors.map((e) => `  line ${e.line} ${e.libraryId}: ${e.error}`),
              ]
            : `${r.file} does not exist: nothing is declared.`,
        );
        if (r.errors.length) process.exitCode = 1;
        if (opts.wait === false || (!r.created.length && !r.updated.some((u) => u.jobId !== null))) return;
        await workQueue(s);
      });
    });
}
