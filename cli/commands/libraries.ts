import type { Command } from 'commander';
import { output, printJson, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';

export function librariesCommand(program: Command): void {
  const libs = program.command('libraries').description('list, show and delete indexed libraries');
  withDataDir(libs.command('list').description('list libraries with their served versions')).action(async (opts: CommonOpts) => {
    await withServices(opts, (s) => {
      const rows = s.store.libraries.list().map((l) => ({
        id: l.id, title: l.title, sourceType: l.sourceType,
        versions: s.store.libraries.versions(l.id).filter((v) => v.isCurrent).map((v) => ({ tag: v.tag || 'current', snippets: v.totalSnippets, tokens: v.totalTokens })),
      }));
      output(opts, rows, () =>
        rows.map((r) => `${r.id}  ${r.title}  [${r.sourceType}]  ${r.versions.map((v) => `${v.tag}: ${v.snippets} snippets`).join(', ') || 'no served version yet'}`),
      );
    });
  });
  withDataDir(libs.command('show').description('show one library (JSON)').argument('<id>')).action(async (id: string, opts: CommonOpts) => {
    await withServices(opts, (s) => {
      const lib = s.store.libraries.get(id);
      if (!lib) throw new ApiError('library_not_found', `No library ${id}.`);
      printJson({ ...lib, versions: s.store.libraries.versions(id) });
    });
  });
  withDataDir(libs.command('delete').description('delete a library and all its versions').argument('<id>')).action(async (id: string, opts: CommonOpts) => {
    await withServices(opts, (s) => {
      if (!s.store.libraries.delete(id)) throw new ApiError('library_not_found', `No library ${id}.`);
      output(opts, { id, deleted: true }, () => `Deleted ${id}.`);
    });
  });
}
