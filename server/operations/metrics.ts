import crypto from 'node:crypto';
import { ApiError } from '../../lib/errors.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { metricsOperation } from '../contracts/metrics.ts';
import type { binder } from './bind.ts';
import { isInstanceOwner } from './admit.ts';

export interface MetricsOperationDeps {
  metrics: Pick<Metrics, 'text' | 'contentType'>;
  defaultTeamspaceId(): number;
  /** STACKS_METRICS_TOKEN: a bearer token that opens /metrics alone (unset: none does). */
  config: { metricsToken?: string };
}

export interface MetricsAnswer {
  contentType: string;
  text: string;
}

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

/**
 * Prometheus metrics are the whole instance's (every teamspace's requests, jobs, libraries, the
 * database): read by the instance's owner, by the holder of the scrape token, or on the metrics
 * port (server/http/routes/metrics.ts), never by another teamspace's owner or admin.
 */
export function metricsOperations(bind: ReturnType<typeof binder>, d: MetricsOperationDeps) {
  const answer = async (): Promise<MetricsAnswer> => ({ contentType: d.metrics.contentType, text: await d.metrics.text() });
  return {
    metrics: bind(metricsOperation, (_i, p, caller) => {
      if (p && !isInstanceOwner(caller, p, d.defaultTeamspaceId())) {
        throw new ApiError(
          'forbidden',
          "The metrics are the whole instance's: an owner of the default teamspace reads them, or a scraper with STACKS_METRICS_TOKEN.",
        );
      }
      return answer();
    }),
    /**
     * The metrics for a presented bearer token when it is the scrape token, else null (the request
     * goes on as an API key). Compared as digests in constant time: no timing tells how much matched.
     */
    metricsForToken: (presented: string | null): Promise<MetricsAnswer> | null => {
      const token = d.config.metricsToken;
      if (!token || presented === null || !crypto.timingSafeEqual(digest(presented), digest(token))) return null;
      return answer();
    },
  };
}
