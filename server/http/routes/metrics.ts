import http from 'node:http';
import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import { route } from '../handler.ts';
import { callerOf, presentedKey } from '../auth.ts';

export interface MetricsRouteDeps {
  operations: Pick<Operations, 'metrics' | 'metricsForToken'>;
}

/**
 * GET /metrics with the scrape token (STACKS_METRICS_TOKEN) as bearer token. Mounted before the
 * caller is resolved, because the token is no API key: resolving it as one would refuse it (401)
 * and log a refused authentication. Any other credential goes on to mountMetrics.
 */
export function mountMetricsToken(app: Express, s: MetricsRouteDeps): void {
  app.get('/metrics', (req, res, next) => {
    const answer = s.operations.metricsForToken(presentedKey(req));
    if (!answer) return next();
    answer.then((m) => void res.type(m.contentType).send(m.text), next);
  });
}

/** GET /metrics on the API port with a key: the operation admits only the instance's owner. */
export function mountMetrics(app: Express, s: MetricsRouteDeps): void {
  app.get(
    '/metrics',
    route(async (req, res) => {
      const m = await s.operations.metrics(req.query, callerOf(res));
      res.type(m.contentType).send(m.text);
    }),
  );
}

/**
 * The metrics port (STACKS_METRICS_PORT): GET /metrics without a key and nothing else, for a
 * scraper on a network the operator trusts (bind it with STACKS_METRICS_HOST; default loopback).
 */
export function metricsServer(metrics: Pick<Metrics, 'text' | 'contentType'>): http.Server {
  return http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'not_found', message: 'Only GET /metrics is served on this port.' }));
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () =>
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'internal_error', message: 'The metrics could not be collected.' })),
    );
  });
}
