import type { Request, Response, NextFunction } from 'express';
import type { KeyService } from '../auth/keys.ts';
import type { Principal } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { asKey, type Caller } from '../operations/index.ts';
import type { AuditLog } from '../audit/log.ts';

/**
 * Reads the API key from `Authorization: Bearer <key>` (or the bare key), `X-API-Key`, or the
 * `STACKS_API_KEY` header that tool clients send.
 */
export function presentedKey(req: Request): string | null {
  const auth = req.get('authorization');
  if (auth) return auth.replace(/^Bearer\s+/i, '').trim() || null;
  return req.get('x-api-key')?.trim() || req.get('stacks_api_key')?.trim() || req.get('stacks-api-key')?.trim() || null;
}

/**
 * Resolves the caller once per request. A key that is presented but wrong is a 401 everywhere,
 * also where keys are optional, and a refused authentication in the audit log.
 */
export function resolvePrincipal(keys: KeyService, audit: Pick<AuditLog, 'refusedAuth'> | null) {
  return (req: Request, res: Response, next: NextFunction) => {
    const key = presentedKey(req);
    if (key === null) return next();
    const principal = keys.verify(key);
    if (!principal) {
      audit?.refusedAuth(req.ip ?? null, 'invalid or revoked API key');
      return next(new ApiError('invalid_api_key', 'The API key is invalid or has been revoked.'));
    }
    res.locals.principal = principal;
    next();
  };
}

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}

/** The caller of an operation: the request's key (the operation admits it, server/operations). */
export function callerOf(res: Response): Caller {
  return asKey(principalOf(res), res.req.ip ?? null);
}
