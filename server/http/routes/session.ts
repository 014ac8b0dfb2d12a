import type { Express, Request, Response } from 'express';
import type { Operations } from '../../operations/index.ts';
import type { OidcSignIn, PendingSignIn } from '../../auth/oidc.ts';
import { SsoRefused } from '../../auth/oidc.ts';
import type { SignInService, SignedIn } from '../../auth/sign-in.ts';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../../auth/sessions.ts';
import { ApiError } from '../../../lib/errors.ts';
import { route } from '../handler.ts';
import { callerOf, cookieOptions } from '../auth.ts';

/** What these routes use. */
export interface SessionRouteDeps {
  operations: Pick<Operations, 'sessionCreate' | 'sessionGet' | 'sessionDelete' | 'setup' | 'usersList' | 'userCreate' | 'userUpdate'>;
  oidc: OidcSignIn | null;
  signIn: Pick<SignInService, 'sso' | 'refused'>;
}

const OIDC_COOKIE = 'stacks_oidc';
const OIDC_PATH = '/api/auth/oidc';

/** Puts the session id in its cookie; the body gets the user and the CSRF token only. */
export function startSession(req: Request, res: Response, s: SignedIn): void {
  res.cookie(SESSION_COOKIE, s.sessionId, cookieOptions(req, SESSION_TTL_MS));
  res.json({ user: s.user, csrfToken: s.csrfToken, expiresAt: s.expiresAt.toISOString() });
}

/**
 * Console sign-in: `POST /api/session` (password), `GET /api/session`, `DELETE /api/session`,
 * `POST /api/setup` (the first owner), single sign-on (`GET /api/auth/oidc/login` and its
 * callback), and `GET/POST /api/users`, `PATCH /api/users/:id`.
 */
export function mountSession(app: Express, s: SessionRouteDeps): void {
  app.post(
    '/api/session',
    route(async (req, res) => startSession(req, res, await s.operations.sessionCreate(req.body ?? {}, callerOf(res)))),
  );
  app.get(
    '/api/session',
    route(async (req, res) => res.json(await s.operations.sessionGet(req.query, callerOf(res)))),
  );
  app.delete(
    '/api/session',
    route(async (_req, res) => {
      await s.operations.sessionDelete({}, callerOf(res));
      res.clearCookie(SESSION_COOKIE, { path: '/' }).status(204).end();
    }),
  );
  app.post(
    '/api/setup',
    route(async (req, res) => startSession(req, res, await s.operations.setup(req.body ?? {}, callerOf(res)))),
  );

  app.get(
    '/api/users',
    route(async (req, res) => res.json(await s.operations.usersList(req.query, callerOf(res)))),
  );
  app.post(
    '/api/users',
    route(async (req, res) => res.status(201).json(await s.operations.userCreate(req.body ?? {}, callerOf(res)))),
  );
  app.patch(
    '/api/users/:id',
    route(async (req, res) => res.json(await s.operations.userUpdate({ ...(req.body ?? {}), id: req.params.id }, callerOf(res)))),
  );

  app.get(
    `${OIDC_PATH}/login`,
    route(async (req, res) => {
      if (!s.oidc) throw new ApiError('not_found', 'Single sign-on is not configured on this instance (STACKS_OIDC_ISSUER).');
      const { location, pending } = await s.oidc.start(`${req.protocol}://${req.get('host')}`);
      res.cookie(OIDC_COOKIE, JSON.stringify(pending), cookieOptions(req, 10 * 60_000, OIDC_PATH));
      res.redirect(302, location);
    }),
  );
  app.get(
    `${OIDC_PATH}/callback`,
    route(async (req, res) => {
      if (!s.oidc) throw new ApiError('not_found', 'Single sign-on is not configured on this instance (STACKS_OIDC_ISSUER).');
      const raw = (req.signedCookies as Record<string, unknown> | undefined)?.[OIDC_COOKIE];
      res.clearCookie(OIDC_COOKIE, { path: OIDC_PATH });
      const back = (message: string) => res.redirect(302, `/#signin-error=${encodeURIComponent(message)}`);
      if (typeof raw !== 'string') return back('The sign-in took too long or was started elsewhere; start again.');
      try {
        const pending = JSON.parse(raw) as PendingSignIn;
        // The provider's answer, on the redirect URI the flow was started with (it may name a proxy's address).
        const callback = new URL(pending.redirectUri);
        callback.search = new URL(req.originalUrl, 'http://callback').search;
        const user = await s.oidc.finish(callback, pending);
        const signed = await s.signIn.sso(user, req.ip ?? null);
        res.cookie(SESSION_COOKIE, signed.sessionId, cookieOptions(req, SESSION_TTL_MS));
        res.redirect(302, '/');
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        await s.signIn.refused(err instanceof SsoRefused ? err.username : null, req.ip ?? null, err.message);
        back(err.message);
      }
    }),
  );
}
