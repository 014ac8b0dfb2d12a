import type { Request, Response, NextFunction, CookieOptions } from 'express';
import type { KeyService } from '../auth/keys.ts';
import type { SessionService } from '../auth/sessions.ts';
import type { UserService } from '../auth/users.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import type { Principal } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { asKey, type Caller, type RequestSession } from '../operations/index.ts';
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

export interface PrincipalDeps {
  keys: KeyService;
  audit: Pick<AuditLog, 'refusedAuth'>;
  sessions: SessionService;
  users: Pick<UserService, 'principal'>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the caller once per request: an API key when one is presented (a wrong one is a 401
 * everywhere, also where keys are optional, and a refused authentication in the audit log), else
 * the console session of the signed cookie. A session only counts for a change when the request
 * carries its CSRF token (X-CSRF-Token) and comes from this origin.
 */
export function resolvePrincipal(d: PrincipalDeps) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = presentedKey(req);
    if (key !== null) {
      const principal = await d.keys.verify(key);
      if (!principal) {
        // Never rejects (AuditLog reports its own write errors); the refusal does not wait for it.
        void d.audit.refusedAuth(req.ip ?? null, 'invalid or revoked API key');
        return next(new ApiError('invalid_api_key', 'The API key is invalid or has been revoked.'));
      }
      res.locals.principal = principal;
      return next();
    }
    const cookies = (req.signedCookies ?? {}) as Record<string, unknown>;
    const id = cookies[SESSION_COOKIE];
    if (typeof id !== 'string') return next();
    const session = await d.sessions.resolve(id);
    if (!session) {
      res.clearCookie(SESSION_COOKIE, { path: '/' });
      return next();
    }
    if (!SAFE_METHODS.has(req.method)) {
      if (!sameOrigin(req)) return next(new ApiError('forbidden', 'This change comes from another site; it is refused.'));
      if (req.get('x-csrf-token') !== session.csrfToken)
        return next(new ApiError('forbidden', 'Missing or wrong X-CSRF-Token for this session; reload the page.'));
    }
    res.locals.principal = d.users.principal(session.user);
    res.locals.session = { id, csrfToken: session.csrfToken } satisfies RequestSession;
    next();
  };
}

/** True unless the browser says the request comes from another origin (Origin, else Referer). */
export function sameOrigin(req: Request): boolean {
  const from = req.get('origin') ?? req.get('referer');
  if (!from) return true;
  try {
    return new URL(from).host === req.get('host');
  } catch {
    return false;
  }
}

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}

/** The caller of an operation: the request's key or session (the operation admits it, server/operations). */
export function callerOf(res: Response): Caller {
  return asKey(principalOf(res), res.req.ip ?? null, (res.locals.session as RequestSession | undefined) ?? null);
}

/** The console's cookies: HTTP-only, signed, same-site; `Secure` when the request came over TLS. */
export function cookieOptions(req: Request, maxAgeMs: number, path = '/'): CookieOptions {
  return { httpOnly: true, signed: true, sameSite: 'lax', secure: req.secure, path, maxAge: maxAgeMs };
}
