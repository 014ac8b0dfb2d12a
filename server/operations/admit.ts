import type { Principal } from '../../lib/model.ts';
import type { Access, LocalAccess } from '../contracts/operation.ts';
import type { PolicySourceType } from '../contracts/policy.ts';
import { ApiError } from '../../lib/errors.ts';

/**
 * Who calls an operation. `key`: a request over HTTP or MCP, with the principal of its API key
 * or of the signed-in user of its console session (null: neither). `local`: the CLI working on the data dir itself, which only someone
 * with the server's files can do: it acts with an owner's rights and no teamspace policy, but
 * still needs the license where the operation does. A local caller may name the teamspace it acts
 * in (`stacks ... --teamspace NAME`); the teamspace operations act in the default one otherwise.
 */
export type Caller = { kind: 'key'; principal: Principal | null; ip?: string | null; session?: RequestSession | null } | { kind: 'local'; teamspace?: string };

/** The console session a request came with (its id from the cookie, and its CSRF token). */
export interface RequestSession {
  id: string;
  csrfToken: string;
}

export const LOCAL: Caller = { kind: 'local' };
/** The local operator acting in the teamspace named `teamspace` (undefined: the default one). */
export const localIn = (teamspace?: string): Caller => (teamspace === undefined ? LOCAL : { kind: 'local', teamspace });
/** A request's caller: its key's (or signed-in user's) principal, client address (for the audit log) and session. */
export const asKey = (principal: Principal | null, ip: string | null = null, session: RequestSession | null = null): Caller => ({
  kind: 'key',
  principal,
  ip,
  session,
});

export interface AdmitDeps {
  config: { allowAnonymousSearch: boolean };
  license: { require(feature?: string): unknown };
  /** Whether the caller's teamspace policy allows adding sources of this type. */
  sourceEnabled(principal: Principal | null, source: PolicySourceType): boolean;
}

/**
 * The one check of every operation: the key (or anonymous search), the role, the license and the
 * teamspace's source policy, in that order, so a caller learns first what it can fix. Returns the
 * principal the operation acts for (null: anonymous or local).
 */
export function admit(deps: AdmitDeps, access: Access | LocalAccess, caller: Caller): Principal | null {
  if (access.caller === 'open') return caller.kind === 'key' ? caller.principal : null;
  if (access.caller === 'local') {
    if (caller.kind === 'local') return null;
    if (!caller.principal) throw new ApiError('invalid_api_key', 'An API key is required: send Authorization: Bearer <key>.');
    throw new ApiError('forbidden', 'This is done on the server itself, with the `stacks` command.');
  }
  if (caller.kind === 'local') {
    if (access.caller === 'key' && access.license) deps.license.require(access.license === true ? undefined : access.license);
    return null;
  }
  const p = caller.principal;
  if (access.caller === 'search') {
    if (!p && !deps.config.allowAnonymousSearch) {
      throw new ApiError('invalid_api_key', 'An API key is required on this instance: send Authorization: Bearer <key>, X-API-Key or STACKS_API_KEY.');
    }
    return p;
  }
  if (!p) throw new ApiError('invalid_api_key', 'An API key is required: send Authorization: Bearer <key>.');
  if (p.scope === 'read') throw new ApiError('forbidden', 'This key has the read scope: it can search, ask for context and use MCP, nothing else.');
  if (access.roles && !access.roles.includes(p.role))
    throw new ApiError('forbidden', `This action needs the role ${access.roles.join(' or ')}; your key's member is ${p.role}.`);
  if (access.license) deps.license.require(access.license === true ? undefined : access.license);
  if (access.source && !deps.sourceEnabled(p, access.source)) {
    throw new ApiError(
      'source_disabled',
      `Adding ${access.source} sources is disabled by this teamspace's policy; an owner or admin can enable it (PATCH /api/v2/policies).`,
    );
  }
  return p;
}

/**
 * Whether an admitted caller is the instance's owner: an owner of the default (first) teamspace,
 * which administers the installation, or the local operator. Owners and admins of any other
 * teamspace (and admins of the default one) run a teamspace, not the instance: instance-wide
 * figures (GET /api/system's totals, /metrics) are not theirs.
 */
export function isInstanceOwner(caller: Caller, p: Principal | null, defaultTeamspaceId: number): boolean {
  if (caller.kind === 'local') return true;
  return p !== null && p.role === 'owner' && p.teamspaceId === defaultTeamspaceId;
}
