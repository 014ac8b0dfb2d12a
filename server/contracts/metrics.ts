import { z } from 'zod';
import { defineOperation } from './operation.ts';

/**
 * Prometheus metrics, instance-wide: GET /metrics with a key of an owner of the default teamspace
 * (the instance's owner; checked by the operation), with STACKS_METRICS_TOKEN as bearer token, or
 * without a key on STACKS_METRICS_PORT.
 */
export const metricsOperation = defineOperation({
  id: 'metrics',
  summary:
    "Prometheus text exposition (the instance's owner, or the STACKS_METRICS_TOKEN bearer token): requests and latency per route, queue depth, job durations, database size, snippets, caches, workers, process, event-loop lag",
  input: z.object({}),
  access: { caller: 'key', roles: ['owner'] },
  http: { method: 'get', path: '/metrics', from: 'query', status: 200, response: z.string().describe('text/plain; version=0.0.4'), text: true },
  errors: ['invalid_api_key', 'forbidden'],
});
