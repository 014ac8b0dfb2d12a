import type { Request, Response, NextFunction } from 'express';
import type { Config } from '../config.ts';
import type { UsageService } from '../teams/usage.ts';
import { principalOf } from './auth.ts';

/** GET paths that are counted as requests and carry RateLimit-* headers. */
export const METERED_GET_PATHS = new Set<string>(['/api/v3/search', '/api/v2/context', '/api/v2/libs/search']);

/** The MCP endpoint: only JSON-RPC `tools/call` messages count (initialize, tools/list and notifications do not). */
export const MCP_PATH = '/mcp';

function isToolCall(body: unknown): boolean {
  if (Array.isArray(body)) return body.some(isToolCall);
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'tools/call';
}

export function isMetered(req: Request): boolean {
  // Express routes ignore case and a trailing slash; so must the meter.
  const path = req.path.length > 1 ? req.path.toLowerCase().replace(/(?<!\/)\/+$/, '') : req.path;
  if (req.method === 'GET' || req.method === 'HEAD') return METERED_GET_PATHS.has(path);
  return req.method === 'POST' && path === MCP_PATH && isToolCall(req.body);
}

export interface MeteringDeps {
  /** metering false: nothing is counted (bench/accounting.ts measures the cost). */
  teams: { metering: boolean; usage: Pick<UsageService, 'meterSoon'> };
  config: Pick<Config, 'allowAnonymousSearch'>;
}

/**
 * Counts search, context, library-search and MCP tool requests before any route runs, so no
 * route needs to know about usage: admits or refuses (429/402) the request, counts it, and sets
 * RateLimit-Limit/-Remaining/-Reset. Mounted after the caller is resolved. Anonymous requests are
 * counted when anonymous search is allowed; otherwise the route itself refuses them and they are not.
 */
export function meterRequests(services: MeteringDeps) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!services.teams.metering || !isMetered(req)) return next();
    const principal = principalOf(res);
    if (!principal && !services.config.allowAnonymousSearch) return next();
    services.teams.usage.meterSoon(principal, req.ip ?? 'unknown').then(
      (outcome) => {
        for (const [k, v] of Object.entries(outcome.headers)) res.setHeader(k, v);
        next();
      },
      (err: unknown) => next(err),
    );
  };
}
