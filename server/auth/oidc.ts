import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Role } from '../../lib/model.ts';
import type { UserMemberRow } from '../store/users.ts';
import { ApiError } from '../../lib/errors.ts';

type OidcClient = typeof import('openid-client');
type OidcConfiguration = import('openid-client').Configuration;

export type OidcSettings = Required<Pick<Config, 'oidcIssuer' | 'oidcClientId' | 'oidcScopes' | 'oidcGroupsClaim' | 'oidcRoleMap' | 'oidcAllowHttp'>> &
  Pick<Config, 'oidcClientSecret' | 'oidcRedirectUri'>;

/** What the login redirect must remember until the callback (kept in a short-lived signed cookie). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
}

/** The teamspace and role an identity's groups map to, or null when the mapping gives it nothing. */
export function mapGroups(map: OidcSettings['oidcRoleMap'], groups: string[]): { teamspace: string; role: Role } | null {
  for (const m of map) if (m.group === '*' || groups.includes(m.group)) return { teamspace: m.teamspace, role: m.role };
  return null;
}

/** A claim that should hold the groups: an array of strings, or one string. */
function groupsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  return typeof value === 'string' ? [value] : [];
}

/**
 * Single sign-on with OpenID Connect: the authorization code flow with PKCE, a state and a nonce,
 * through `openid-client`. The provider's metadata is discovered on first use (and again after a
 * failure). After the provider vouches for someone, their groups claim is mapped to a teamspace
 * and role (STACKS_OIDC_ROLE_MAP); `provision` turns that into a user.
 */
export class OidcSignIn {
  private discovered: Promise<{ lib: OidcClient; config: OidcConfiguration }> | null = null;

  constructor(
    private readonly settings: OidcSettings,
    private readonly provision: (identity: { issuer: string; subject: string; username: string; teamspace: string; role: Role }) => Promise<UserMemberRow>,
    private readonly log: Logger,
  ) {}

  private client(): Promise<{ lib: OidcClient; config: OidcConfiguration }> {
    this.discovered ??= (async () => {
      const lib = await import('openid-client');
      const s = this.settings;
      const auth = s.oidcClientSecret ? lib.ClientSecretPost(s.oidcClientSecret) : lib.None();
      const config = await lib.discovery(
        new URL(s.oidcIssuer),
        s.oidcClientId,
        undefined,
        auth,
        s.oidcAllowHttp ? { execute: [lib.allowInsecureRequests] } : undefined,
      );
      return { lib, config };
    })().catch((err: unknown) => {
      this.discovered = null;
      this.log.error({ err, issuer: this.settings.oidcIssuer }, 'OpenID Connect discovery failed');
      throw new ApiError('fetch_failed', `The identity provider ${this.settings.oidcIssuer} could not be reached; try again later.`);
    });
    return this.discovered;
  }

  /** Where to send the browser, and what to remember for the callback. */
  async start(origin: string): Promise<{ location: string; pending: PendingSignIn }> {
    const { lib, config } = await this.client();
    const redirectUri = this.settings.oidcRedirectUri ?? `${origin}/api/auth/oidc/callback`;
    const pending: PendingSignIn = { state: lib.randomState(), nonce: lib.randomNonce(), verifier: lib.randomPKCECodeVerifier(), redirectUri };
    const url = lib.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.settings.oidcScopes,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await lib.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return { location: url.href, pending };
  }

  /**
   * Completes the flow at the callback URL: checks state, nonce and PKCE, reads the identity
   * (ID token, then userinfo for the groups when the token has none), and maps it. Throws
   * `forbidden` when the mapping gives the identity nothing; `name` is set for the audit log.
   */
  async finish(callbackUrl: URL, pending: PendingSignIn): Promise<UserMemberRow> {
    const { lib, config } = await this.client();
    let claims: Record<string, unknown>;
    let accessToken: string;
    try {
      const tokens = await lib.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = { ...(tokens.claims() ?? {}) };
      accessToken = tokens.access_token;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'OpenID Connect sign-in refused');
      throw new SsoRefused(null, 'The identity provider did not complete the sign-in; start again.');
    }
    const subject = String(claims.sub);
    if (claims[this.settings.oidcGroupsClaim] === undefined) {
      const info = await lib.fetchUserInfo(config, accessToken, subject).catch(() => ({}) as Record<string, unknown>);
      claims = { ...info, ...claims };
    }
    const username = String(claims.preferred_username ?? claims.email ?? subject);
    const mapped = mapGroups(this.settings.oidcRoleMap, groupsOf(claims[this.settings.oidcGroupsClaim]));
    if (!mapped) throw new SsoRefused(username, `${username} signed in, but none of their groups may use Stacks here; ask an administrator.`);
    return this.provision({ issuer: config.serverMetadata().issuer, subject, username, ...mapped });
  }
}

/** An SSO sign-in that is refused; `username` is who the provider said it was (when it got that far). */
export class SsoRefused extends ApiError {
  constructor(
    readonly username: string | null,
    message: string,
  ) {
    super('forbidden', message);
  }
}
