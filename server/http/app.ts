import express, { type Request, type Response, type NextFunction } from 'express';
import helmet from 'helmet';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { KeyService } from '../auth/keys.ts';
import { ApiError, isApiError } from '../../lib/errors.ts';
import { resolvePrincipal } from './auth.ts';
import type { AuditLog } from '../audit/log.ts';
import type { SessionService } from '../auth/sessions.ts';
import type { UserService } from '../auth/users.ts';
import cookieParser from 'cookie-parser';
import { sendError } from './handler.ts';
import { meterRequests, type MeteringDeps } from './metering.ts';
import { mountRoutes, rawBodyPaths, type RouteDeps } from './routes/index.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { mountMetricsToken } from './routes/metrics.ts';
import type { ServingActivity } from '../system/serving-activity.ts';

/** What the app needs: the routes' dependencies, the key check, the meter, the log and the limits. */
export type AppDeps = RouteDeps &
  MeteringDeps & {
    keys: KeyService;
    audit: AuditLog;
    sessions: SessionService;
    users: UserService;
    cookieSecret: string;
    log: Logger;
    config: Pick<Config, 'bodyLimit' | 'trustProxy'>;
    metrics: Pick<Metrics, 'observeRequest'>;
    activity: Pick<ServingActivity, 'begin' | 'end'>;
  };

/**
 * The Express app: security headers, body limits, caller resolution, routes, and one error shape.
 * `services` is the composition root's result (server/services.ts), typed as what the app uses.
 */
export function createApp(services: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(services.config.trustProxy));
  app.set('query parser', 'extended');
  // Answers are computed (and metered) per request, so a conditional GET saves nothing; hashing every body for an ETag costs.
  app.set('etag', false);
  // An appliance is opened as http://<its name>:3000/ on a LAN: upgrade-insecure-requests would make the
  // browser fetch the page's script and style over https (which fails), and HSTS over plain HTTP would
  // lock the name to https. HSTS is sent only for requests that really arrived over TLS (req.secure
  // honours X-Forwarded-Proto from the trusted proxies of STACKS_TRUST_PROXY).
  app.use(helmet({ hsts: false, contentSecurityPolicy: { useDefaults: true, directives: { 'script-src': ["'self'"], 'upgrade-insecure-requests': null } } }));
  const hsts = helmet.strictTransportSecurity();
  app.use((req, res, next) => (req.secure ? hsts(req, res, next) : next()));
  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    // Counted in flight until the response ends or the client goes: background workers wait for
    // quiet. Not a stream a client holds open (the jobs page's events, MCP's GET stream).
    if (!(req.method === 'GET' && req.headers.accept?.includes('text/event-stream'))) {
      services.activity.begin();
      res.once('close', () => services.activity.end());
    }
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      services.log.debug({ method: req.method, path: req.path, status: res.statusCode, ms }, 'request');
      services.metrics.observeRequest(req.method, routeLabel(req, res.statusCode), res.statusCode, ms / 1000);
    });
    next();
  });
  const json = express.json({ limit: services.config.bodyLimit });
  app.use((req, res, next) => (rawBodyPaths.has(req.path) ? next() : json(req, res, next)));
  app.use(cookieParser(services.cookieSecret));
  mountMetricsToken(app, services);
  app.use(resolvePrincipal(services));
  app.use(meterRequests(services));

  mountRoutes(app, services);

  app.use((req: Request, _res: Response, next: NextFunction) => next(new ApiError('not_found', `No route for ${req.method} ${req.path}.`)));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => sendError(res, toApiError(err, services)));
  return app;
}

/**
 * The matched route's pattern (never the raw path: one label per route, whatever the IDs in it);
 * without a route, `static` for the console's files and `unmatched` for what was refused or not
 * found before any route (a bad key, an unknown path).
 */
function routeLabel(req: Request, status: number): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern === 'string') return `${req.baseUrl}${pattern}`;
  return status < 400 ? 'static' : 'unmatched';
}

/** STACKS_TRUST_PROXY as Express takes it (the value was validated with the configuration). */
function trustProxySetting(value: string): boolean | number | string[] {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((item) => item.trim());
}

function toApiError(err: unknown, services: Pick<AppDeps, 'config' | 'log'>): ApiError {
  if (isApiError(err)) return err;
  const e = err as { type?: string; status?: number; message?: string; code?: string };
  if (e?.type === 'entity.too.large') return new ApiError('payload_too_large', `The request body is larger than ${services.config.bodyLimit}.`);
  if (e?.type === 'entity.parse.failed') return new ApiError('validation_error', 'The request body is not valid JSON.');
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500)
    return new ApiError('validation_error', e.message ?? 'Bad request.', { status: e.status });
  services.log.error({ err: e?.message, stack: (err as Error)?.stack }, 'unexpected error');
  return new ApiError('internal_error', 'An unexpected error occurred; see the server log.');
}
