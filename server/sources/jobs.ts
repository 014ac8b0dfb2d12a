import type { Services } from '../services.ts';

/** Job kinds source-openapi, source-llmstxt and source-files (handlers: server/sources/indexing.ts). */
export function registerSourceJobs(services: Services): void {
  services.sources.register(services.jobs);
}
