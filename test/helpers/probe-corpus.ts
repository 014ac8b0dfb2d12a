// The fixture corpus the library probes are measured on (test/store-postgres-search.test.ts): the
// rows of real documentation as the writer prepares them, the questions, and select.ts's probe match.
import fs from 'node:fs';
import path from 'node:path';
import { bundleCodeSnippetSchema, bundleInfoSnippetSchema, codeSnippetInput, infoSnippetInput } from '../../server/ingest/bundle.ts';
import { toRow } from '../../server/ingest/writer.ts';
import type { SnippetRow } from '../../server/store/snippets.ts';
import { CORPUS_BUNDLES } from './fixtures.ts';

/** The corpus the probes are measured on (test/fixtures/corpus): several libraries, and three versions of one. */
export const PROBE_CORPUS = ['fastify', 'fastify-v4.29.1', 'fastify-v3.29.5', 'vite', 'hono', 'pino', 'zod', 'valibot', 'tanstack-query'];

/** Written before any result was seen; each names what it is about, not which library. */
export const QUESTIONS = [
  'how do I register a plugin with encapsulation',
  'validate request body with JSON schema',
  'set a custom logger serializer for requests',
  'configure dev server proxy',
  'build library mode with rollup options',
  'hot module replacement API accept',
  'middleware for CORS in edge runtime',
  'RPC client type inference from routes',
  'JSX rendering with streaming',
  'redact sensitive fields in log output',
  'child logger with bindings',
  'pino transport to a file destination',
  'parse an email string schema',
  'discriminated union of object schemas',
  'refine with custom error message',
  'safeParse returns error issues',
  'useQuery with stale time and cache time',
  'invalidate queries after mutation',
  'infinite query pagination with getNextPageParam',
  'prefetch query on the server for SSR hydration',
  'pipe transform string to number',
  'optional and nullable schema with default value',
  'reply with a stream and set headers',
  'decorate the request object',
  'onRequest hook lifecycle',
  'environment variables with import.meta.env',
  'glob import of modules',
  'static assets public directory base path',
  'set a signed cookie',
  'validator middleware for a json body',
  'async local storage context in logger',
  'custom error handler setErrorHandler',
  'coerce string to date',
  'optimistic updates rollback on error',
  'SSR manifest preload directives',
];

/** The corpus's rows per library version, as the writer prepares them. */
export function corpusRows(): { project: string; rows: SnippetRow[] }[] {
  return PROBE_CORPUS.flatMap((name) => {
    const doc = JSON.parse(fs.readFileSync(path.join(CORPUS_BUNDLES, `${name}.json`), 'utf8')) as { libraries: Record<string, unknown>[] };
    return doc.libraries.map((l) => {
      const inputs = [
        ...(l.codeSnippets as unknown[]).map((s) => codeSnippetInput(bundleCodeSnippetSchema.parse(s))),
        ...(l.infoSnippets as unknown[]).map((s) => infoSnippetInput(bundleInfoSnippetSchema.parse(s))),
      ];
      return { project: name, rows: inputs.map((s, i) => toRow(s, i)) };
    });
  });
}

/** select.ts probeMatch: the question's rarest words that fit the document budget (TUNING.selection), by SQLite's counts. */
export function probeMatch(question: string, df: Map<string, number>): string | null {
  if (df.size === 0) return null;
  const chosen: string[] = [];
  let docs = 0;
  for (const [term, n] of [...df].sort((a, b) => a[1] - b[1])) {
    if (chosen.length >= 8 || (chosen.length > 0 && docs + n > 12_000)) break;
    chosen.push(`"${term}"`);
    docs += n;
  }
  return chosen.join(' OR ');
}
