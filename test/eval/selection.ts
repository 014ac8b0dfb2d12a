/**
 * Library-selection evaluation of /api/v3/search: fuzzy product names given as `library` values,
 * and library-less questions (products named in the question, or none named at all). Prints the
 * share of questions whose selection is right (target >= 95%). Run alone with
 * `node --import tsx test/eval/selection.ts [--verbose]`; `npm run eval` prints it too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Services } from '../../server/services.ts';
import { MultiLibrarySearch } from '../../server/search/search-service.ts';
import { Question } from '../../server/search/query.ts';
import { loadCorpus } from './corpus.ts';

export interface SelectionQuestion {
  /** `library` values of the request (empty: library-less). */
  libraries: string[];
  question: string;
  /** Library IDs that must be selected. */
  expect: string[];
  /**
   * exact: the selection is exactly `expect` (names given or named in the question);
   * first: the first selected library is expect[0] (inferred from the documents; others may follow).
   */
  check: 'exact' | 'first';
}

const fastify = '/fastify/fastify';
const vite = '/vitejs/vite';
const hono = '/honojs/website';
const pino = '/pinojs/pino';
const zod = '/colinhacks/zod';

const byName = (name: string, expect: string, question = 'getting started'): SelectionQuestion => ({
  libraries: [name],
  question,
  expect: [expect],
  check: 'exact',
});
const named = (question: string, ...expect: string[]): SelectionQuestion => ({ libraries: [], question, expect, check: 'exact' });
const inferred = (question: string, expect: string): SelectionQuestion => ({ libraries: [], question, expect: [expect], check: 'first' });

export const SELECTION_QUESTIONS: SelectionQuestion[] = [
  // Fuzzy product names and typos as library values.
  byName('fastify', fastify),
  byName('Fastify', fastify),
  byName('fastfy', fastify),
  byName('fastiy', fastify),
  byName('fastify.js', fastify),
  byName('/fastify/fastify', fastify),
  byName('/someone/fastify', fastify),
  byName('fastify@4', fastify),
  byName('fastify.dev', fastify),
  byName('vite', vite),
  byName('vite js', vite),
  byName('Vite.js', vite),
  byName('vitejs', vite),
  byName('/vitejs/vite', vite),
  byName('vitte', vite),
  byName('hono', hono),
  byName('Hono', hono),
  byName('honojs', hono),
  byName('hono.dev', hono),
  byName('/honojs/hono', hono),
  byName('hnoo', hono),
  byName('pino', pino),
  byName('pinojs', pino),
  byName('/pinojs/pino', pino),
  byName('pino logger', pino),
  byName('getpino', pino),
  byName('zod', zod),
  byName('Zod', zod),
  byName('colinhacks/zod', zod),
  byName('zod.dev', zod),
  byName('zod@3', zod),
  byName('zodd', zod),
  { libraries: ['fastfy', 'zod'], question: 'validate the request body', expect: [fastify, zod], check: 'exact' },
  { libraries: ['vite', 'hono', 'pino', 'fastify'], question: 'logging middleware', expect: [vite, hono, pino, fastify], check: 'exact' },

  // Library-less, the product is named in the question.
  named('How do I register a plugin in Fastify?', fastify),
  named('fastify.register with a prefix option', fastify),
  named('vite.config.ts: how do I set up a proxy for the dev server?', vite),
  named('How do I add JWT auth middleware in Hono?', hono),
  named('pino transport that writes to a file', pino),
  named('How do I make a field optional in a Zod schema?', zod),
  named('Use zod to validate a fastify request body', zod, fastify),
  named('Logging Hono requests with pino', hono, pino),
  named('Migrating from fastfy v3 to v4: what changed in hooks?', fastify),
  named('Is Vite or Fastify better for server-side rendering?', vite, fastify),
  named('The next step: configure pino redaction', pino),
  named('Express-style middleware in hono', hono),

  // Library-less, no product named: the documents decide.
  inferred('How do I redact sensitive keys from log lines and create child loggers with bindings?', pino),
  inferred('configure the dev server proxy and hot module replacement', vite),
  inferred('infer the static TypeScript type from a schema with z.infer', zod),
  inferred('discriminated union of object schemas with safeParse', zod),
  inferred('decorate the reply object and add a preHandler hook', fastify),
  inferred('build for production with rollupOptions and manualChunks', vite),
  inferred('deploy an app to Cloudflare Workers with c.json responses', hono),
  inferred('asynchronous logging with sonic-boom destination and flush', pino),
  inferred('encapsulation context of plugins and fastify-plugin skip-override', fastify),
  inferred('environment variables import.meta.env in the client', vite),
  inferred('serialize the response with a JSON schema for speed', fastify),
  inferred('server-side rendering middleware mode with ssrLoadModule', vite),
  inferred('type-safe RPC client for my routes', hono),
  inferred('custom error messages in refinements', zod),
  inferred('set the log level per child and pretty print in development', pino),
  // Pasted error output (long): only its distinctive words reach the probe.
  inferred(
    'FastifyError [FST_ERR_CTP_INVALID_MEDIA_TYPE]: Unsupported Media Type: application/xml\n' +
      '    at ContentTypeParser.run (/app/node_modules/lib/contentTypeParser.js:180:14)\n'.repeat(6) +
      '    at preValidationCallback (/app/node_modules/lib/handleRequest.js:92:5)\n    statusCode: 415, code: FST_ERR_CTP_INVALID_MEDIA_TYPE',
    fastify,
  ),
  inferred(
    '[vite] Internal server error: Failed to resolve import "./Comp.vue" from "src/App.vue". Does the file exist?\n' +
      '  Plugin: vite:import-analysis\n  File: /home/me/app/src/App.vue:3:17\n' +
      '      at formatError (file:///home/me/app/node_modules/dist/node/chunks/dep.js:50831:46)\n'.repeat(5) +
      'optimizeDeps include exclude server.fs.allow',
    vite,
  ),
  named('zod vs. yup for form validation', zod),
  named('hono/jsx rendering on the server', hono),
  byName('Fastify framework', fastify),
  byName('zod validation', zod),
  // A product that is not indexed selects nothing (the search answers 404).
  { libraries: ['react'], question: 'useEffect cleanup', expect: [], check: 'exact' },
  { libraries: ['next js'], question: 'app router layouts', expect: [], check: 'exact' },
];

export interface SelectionResult {
  n: number;
  correct: number;
  accuracy: number;
  byKind: Record<'name' | 'named' | 'inferred', { n: number; correct: number }>;
  misses: { q: SelectionQuestion; got: string[] }[];
}

/** Asks the selector (the one /api/v3/search uses) every question. */
export function evaluateSelection(services: Services, questions: SelectionQuestion[] = SELECTION_QUESTIONS): SelectionResult {
  const selector = (services.search as MultiLibrarySearch).selector();
  const byKind: SelectionResult['byKind'] = { name: { n: 0, correct: 0 }, named: { n: 0, correct: 0 }, inferred: { n: 0, correct: 0 } };
  const misses: SelectionResult['misses'] = [];
  let correct = 0;
  for (const q of questions) {
    const got = selector.select({ question: new Question(q.question), libraries: q.libraries }, null).choices.map((c) => c.entry.library.id);
    const ok = q.check === 'exact' ? got.length === q.expect.length && q.expect.every((e) => got.includes(e)) : got[0] === q.expect[0];
    const kind = q.libraries.length ? 'name' : q.check === 'exact' ? 'named' : 'inferred';
    byKind[kind].n++;
    if (ok) {
      correct++;
      byKind[kind].correct++;
    } else misses.push({ q, got });
  }
  return { n: questions.length, correct, accuracy: questions.length ? correct / questions.length : 0, byKind, misses };
}

export function formatSelection(r: SelectionResult, verbose = false): string {
  const pct = (a: number, b: number) => `${b ? ((100 * a) / b).toFixed(1) : '0.0'}%`;
  const lines = [
    `library selection (${r.n} questions): ${pct(r.correct, r.n)} correct (target >= 95%)`,
    `  fuzzy names as library values   ${pct(r.byKind.name.correct, r.byKind.name.n)} of ${r.byKind.name.n}`,
    `  products named in the question  ${pct(r.byKind.named.correct, r.byKind.named.n)} of ${r.byKind.named.n}`,
    `  inferred from the documents     ${pct(r.byKind.inferred.correct, r.byKind.inferred.n)} of ${r.byKind.inferred.n}`,
  ];
  if (verbose)
    for (const m of r.misses)
      lines.push(`  miss: [${m.q.libraries.join(', ')}] "${m.q.question}" expected ${m.q.expect.join(', ')} got ${m.got.join(', ') || 'nothing'}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { services, dataDir } = await loadCorpus();
  try {
    console.log(formatSelection(evaluateSelection(services), process.argv.includes('--verbose')));
  } finally {
    services.store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
