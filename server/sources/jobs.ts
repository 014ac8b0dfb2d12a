import type { Services } from '../services.ts';

/** Job kinds source-openapi, source-llmstxt and source-files (handlers live in SourceService). */
export function registerSourceJobs(services: Services): void {
  services.sources.register(services.jobs);
}
