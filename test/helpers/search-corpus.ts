import fs from 'node:fs';
import path from 'node:path';
import type { Services } from '../../server/services.ts';
import {
  bundleCodeSnippetSchema,
  bundleHeaderSchema,
  bundleInfoSnippetSchema,
  bundleMeta,
  bundleTarget,
  codeSnippetInput,
  infoSnippetInput,
} from '../../server/ingest/bundle.ts';
import { CORPUS_BUNDLES } from './fixtures.ts';

/** Every corpus bundle: fastify current + v4.29.1 + v3.29.5, vite, hono, pino, zod. */
export const SEARCH_CORPUS = ['fastify', 'fastify-v4.29.1', 'fastify-v3.29.5', 'vite', 'hono', 'pino', 'zod'];

/** Loads real corpus bundles (test/fixtures/corpus/bundles) through services.writer, one committed version per library. */
export async function loadSearchCorpus(services: Services, names: string[] = SEARCH_CORPUS): Promise<{ id: string; tag: string; snippets: number }[]> {
  const out: { id: string; tag: string; snippets: number }[] = [];
  for (const name of names) {
    const doc = JSON.parse(fs.readFileSync(path.join(CORPUS_BUNDLES, `${name}.json`), 'utf8')) as { libraries: Record<string, unknown>[] };
    for (const lib of doc.libraries) {
      const header = bundleHeaderSchema.parse(lib);
      const target = bundleTarget(header);
      if (!target) throw new Error(`bundle ${name}: bad project ${header.project}`);
      const build = await services.writer.begin(bundleMeta(header, target.id), { tag: target.tag });
      const all = [
        ...(lib.codeSnippets as unknown[]).map((s) => codeSnippetInput(bundleCodeSnippetSchema.parse(s))),
        ...(lib.infoSnippets as unknown[]).map((s) => infoSnippetInput(bundleInfoSnippetSchema.parse(s))),
      ];
      for (let i = 0; i < all.length; i += 500) await build.add(all.slice(i, i + 500));
      const r = await build.commit();
      out.push({ id: target.id, tag: target.tag, snippets: r.snippets });
    }
  }
  return out;
}
