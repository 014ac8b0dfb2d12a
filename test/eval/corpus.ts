import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type ConfigInput } from '../../server/config.ts';
import { createLogger } from '../../server/log.ts';
import { createServices, onSqlite, type Services } from '../../server/services.ts';
import type { Store } from '../../server/store/index.ts';
import { bundlePath, loadBundleFile } from './bundles.ts';
import { fillVectors } from '../../server/embed/reembed-job.ts';

/** The corpus of the in-process evaluation (test/eval/run.ts, test/eval/selection.ts). */
export const BUNDLES = ['fastify', 'fastify-v4.29.1', 'fastify-v3.29.5', 'vite', 'hono', 'pino', 'zod'];

/** Creates services over a temporary data dir and loads the named corpus bundles through the writer. */
export async function loadCorpus(bundles: string[] = BUNDLES, overrides: Partial<ConfigInput> = {}): Promise<{ services: Services<Store>; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-eval-'));
  // Retrieval in this thread: the evaluation awaits each answer (unref'd workers would let the process exit meanwhile).
  const config = loadConfig({ dataDir, logLevel: 'warn', searchWorkers: 0, ...overrides } as never, {});
  const services = onSqlite(await createServices(config, createLogger('warn')));
  for (const b of bundles) await loadBundleFile(services.writer, bundlePath(b));
  // The sentence model is left to the embed job when writing; no job runs here.
  if (services.embedder?.deferred) await fillVectors(services.store, services.embedder);
  return { services, dataDir };
}
