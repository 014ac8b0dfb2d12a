import type { Request, Response, NextFunction } from 'express';
import type { KeyService } from '../auth/keys.ts';
import type { Principal, Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';

/**
 * Reads the API key from `Authorization: Bearer <key>` (or the bare key), `X-API-Key`, or the
 * `STACKS_API_KEY` header that tool clients send.
 */
export function presentedKey(req: Request): string | null {
  const auth = req.get('authorization');
  if (auth) return auth.replace(/^Bearer\s+/i, '').trim() || null;
  return req.get('x-api-key')?.trim() || req.get('stacks_api_key')?.trim() || req.get('stacks-api-key')?.trim() || null;
}

/** Resolves the caller once per request. A key that is presented but wrong is a 401 everywhere, also where keys are optional. */
export function resolvePrincipal(keys: KeyService) {
  return (req: Request, res: Response, next: NextFunction) => {
    const key = presentedKey(req);
    if (key === null) return next();
    const principal = keys.verify(key);
    if (!principal) return next(new ApiError('invalid_api_key', 'The API key is invalid or has been revoked.'));
    res.locals.principal = principal;
    next();
  };
}

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}

/**
 * The caller of a search endpoint (/v3/search, /v2/context, /v2/libs/search, /mcp): anonymous is
 * allowed unless the allowAnonymousSearch setting is off, then a key is required (401).
 */
export function searchPrincipal(res: Response, config: { allowAnonymousSearch: boolean }): Principal | null {
  const p = principalOf(res);
  if (!p && !config.allowAnonymousSearch) {
    throw new ApiError('invalid_api_key', 'An API key is required on this instance: send Authorization: Bearer <key>, X-API-Key or STACKS_API_KEY.');
  }
  return p;
}

export function requirePrincipal(res: Response, roles?: Role[]): Principal {
  const p = principalOf(res);
  if (!p) throw new ApiError('invalid_api_key', 'An API key is required: send Authorization: Bearer <key>.');
  if (roles && !roles.includes(p.role)) throw new ApiError('forbidden', `This action needs the role ${roles.join(' or ')}; your key's member is ${p.role}.`);
  return p;
}

/** Express middleware form of requirePrincipal. */
export function requireKey(roles?: Role[]) {
  return (_req: Request, res: Response, next: NextFunction) => {
    try {
      requirePrincipal(res, roles);
      next();
    } catch (err) {
      next(err);
    }
  };
}
