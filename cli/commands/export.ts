import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import type { Command } from 'commander';
import { withDataDir, withServices, type CommonOpts } from '../context.ts';
import { LOCAL } from '../../server/operations/index.ts';

/** `stacks export LIBRARY... [--out FILE]`: the same export as GET /api/export, as the operator (every library), to a file or stdout. */
export function exportCommand(program: Command): void {
  withDataDir(
    program
      .command('export')
      .description('export libraries as an import bundle (JSON) for another instance')
      .argument('<library...>', '/owner/repo (every served version) or /owner/repo/<version>'),
  )
    .option('--out <file>', 'write the bundle here (default: stdout)')
    .action(async (libraries: string[], opts: CommonOpts & { out?: string }) => {
      await withServices(opts, async (s) => {
        const plan = await s.operations.exportLibraries({ library: libraries }, LOCAL);
        const file = opts.out ? path.resolve(opts.out) : null;
        const out = file ? fs.createWriteStream(`${file}.partial`) : process.stdout;
        for await (const chunk of plan.chunks()) if (!out.write(chunk)) await once(out, 'drain');
        if (file) {
          await new Promise<void>((resolve, reject) => (out as fs.WriteStream).end((err?: Error | null) => (err ? reject(err) : resolve())));
          fs.renameSync(`${file}.partial`, file);
          const n = plan.libraries.reduce((k, l) => k + l.snippets, 0);
          const summary = { file, libraries: plan.libraries, bytes: fs.statSync(file).size };
          process.stderr.write(opts.json ? '' : `Exported ${plan.libraries.length} library version(s), ${n} snippets, to ${file}.\n`);
          if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
        }
      });
    });
}
