import fs from 'node:fs';
import path from 'node:path';
import type { LibraryWriter } from '../../server/ingest/writer.ts';
import {
  bundleCodeSnippetSchema,
  bundleHeaderSchema,
  bundleInfoSnippetSchema,
  bundleMeta,
  bundleTarget,
  codeSnippetInput,
  infoSnippetInput,
} from '../../server/ingest/bundle.ts';
import type { SnippetInput } from '../../lib/model.ts';
import { startTestServer, type TestServer, type TestServerOptions } from '../helpers/server.ts';

/** Copies of ../shared/corpus/bundles and corpus/extra/bundles (licenses beside them), so the evaluation runs in any clone. */
export const CORPUS_BUNDLES = path.resolve(import.meta.dirname, '../fixtures/corpus/bundles');

/**
 * Loads an import bundle file straight through the writer (the bundle mapping of
 * server/ingest/bundle.ts, no HTTP import job): one version build per library, committed at the end.
 */
export async function loadBundleFile(
  writer: LibraryWriter,
  file: string,
  opts: { onBatch?: () => Promise<void> | void } = {},
): Promise<{ id: string; tag: string; snippets: number }[]> {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { libraries: Record<string, unknown>[] };
  const out: { id: string; tag: string; snippets: number }[] = [];
  for (const lib of doc.libraries) {
    const { codeSnippets, infoSnippets, ...rest } = lib as { codeSnippets: unknown[]; infoSnippets: unknown[] };
    const header = bundleHeaderSchema.parse(rest);
    const target = bundleTarget(header);
    if (!target) throw new Error(`bad project ${header.project}`);
    const build = await writer.begin(bundleMeta(header, target.id), { tag: target.tag });
    const inputs: SnippetInput[] = [
      ...codeSnippets.map((s) => codeSnippetInput(bundleCodeSnippetSchema.parse(s))),
      ...infoSnippets.map((s) => infoSnippetInput(bundleInfoSnippetSchema.parse(s))),
    ];
    for (let i = 0; i < inputs.length; i += 250) {
      await build.add(inputs.slice(i, i + 250));
      await opts.onBatch?.();
    }
    const r = await build.commit();
    out.push({ id: target.id, tag: target.tag, snippets: r.snippets });
  }
  return out;
}

/** Loads every reference corpus of test/fixtures/corpus through the writer, in name order. */
export async function loadReferenceCorpora(writer: LibraryWriter): Promise<void> {
  for (const file of fs
    .readdirSync(CORPUS_BUNDLES)
    .filter((f) => f.endsWith('.json'))
    .sort())
    await loadBundleFile(writer, path.join(CORPUS_BUNDLES, file));
}

export function bundlePath(name: string): string {
  return path.join(CORPUS_BUNDLES, `${name}.json`);
}

/** A test server (ephemeral port, temporary data dir) with these corpus bundles loaded and the jobs they queue done (the embed job too). */
export async function serverWithBundles(names: string[], options: TestServerOptions = {}): Promise<TestServer> {
  const s = await startTestServer(options);
  try {
    for (const name of names) await loadBundleFile(s.services.writer, bundlePath(name));
    await s.services.jobs.idle();
  } catch (err) {
    await s.close();
    throw err;
  }
  return s;
}
