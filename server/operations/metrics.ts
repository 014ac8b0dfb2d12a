import type { Metrics } from '../metrics/metrics.ts';
import { metricsOperation } from '../contracts/metrics.ts';
import type { binder } from './bind.ts';

export interface MetricsOperationDeps {
  metrics: Pick<Metrics, 'text' | 'contentType'>;
}

export function metricsOperations(bind: ReturnType<typeof binder>, d: MetricsOperationDeps) {
  return {
    metrics: bind(metricsOperation, async () => ({ contentType: d.metrics.contentType, text: await d.metrics.text() })),
  };
}
