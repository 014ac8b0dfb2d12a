import type { Command } from 'commander';
import { output, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { LOCAL } from '../../server/operations/index.ts';

/** `stacks search` (the /api/v3/search answer) and `stacks resolve` (the /api/v2/libs/search lookup): the same operations, on the data dir. */
export function searchCommand(program: Command): void {
  withDataDir(program.command('search').description('search documentation across up to four libraries (as GET /api/v3/search)').argument('<query...>'))
    .option('-l, --library <value>', 'library ID or product name; repeat up to 4 times', (v: string, acc: string[]) => [...acc, v], [] as string[])
    // Not --version: the program's own --version flag would catch it.
    .option('--lib-version <version>', 'version to prefer: latest, 4, v4.2, 1_2_3, 1.2.3-rc.1')
    .option('--language <language>', 'preferred programming language')
    .action(async (words: string[], opts: CommonOpts & { library: string[]; libVersion?: string; language?: string }) => {
      await withServices(opts, async (s) => {
        const input = { query: words.join(' '), library: opts.library, version: opts.libVersion, language: opts.language, type: opts.json ? 'json' : 'txt' };
        const { answer: out } = await s.operations.search(input, LOCAL);
        for (const [k, v] of Object.entries(out.headers)) process.stderr.write(`${k}: ${v}\n`);
        output(opts, out.json, () => out.text);
      });
    });
  withDataDir(program.command('resolve').description('find libraries by name (as GET /api/v2/libs/search)').argument('<name>').argument('[query...]')).action(
    async (name: string, words: string[], opts: CommonOpts) => {
      await withServices(opts, async (s) => {
        const out = await s.operations.libsSearch({ libraryName: name, query: words.length ? words.join(' ') : name }, LOCAL);
        output(opts, out, () =>
          out.results.map((r) => `${r.id}  ${r.title}  ${r.totalSnippets} snippets${r.versions.length ? `  versions: ${r.versions.join(', ')}` : ''}`),
        );
      });
    },
  );
}
