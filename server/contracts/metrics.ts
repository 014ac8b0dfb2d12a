import { z } from 'zod';
import { ADMINS, defineOperation } from './operation.ts';

/** Prometheus metrics: GET /metrics with an owner or admin key (or, without a key, on STACKS_METRICS_PORT). */
export const metricsOperation = defineOperation({
  id: 'metrics',
  summary: 'Prometheus text exposition: requests and latency per route, queue depth, job durations, database size, snippets, caches, workers, process',
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'get', path: '/metrics', from: 'query', status: 200, response: z.string().describe('text/plain; version=0.0.4'), text: true },
  errors: ['invalid_api_key', 'forbidden'],
});
