import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Stores } from '../store/stores.ts';
import type { TeamService } from '../teams/index.ts';
import type { AuditLog } from '../audit/log.ts';
import type { PublicUrl } from '../system/public-url.ts';
import { ApiError } from '../../lib/errors.ts';
import { UserService } from './users.ts';
import { SessionService } from './sessions.ts';
import { SignInService } from './sign-in.ts';
import { SignInThrottle } from './throttle.ts';
import { OidcSignIn, type OidcSettings } from './oidc.ts';
import { InvitationService } from './invitations.ts';

/** Users, sessions and sign-in (password, setup link, single sign-on). Users join teamspaces as members, through the member service (license seats). */
export function createPeople(config: Config, log: Logger, store: Stores, teams: TeamService, audit: AuditLog, publicUrl: PublicUrl) {
  const users = new UserService(store, { maxSeats: () => teams.members.maxMembers() });
  const sessions = new SessionService(store, (u) => users.usable(u));
  const invitations = new InvitationService(store, users, () => publicUrl.current());
  const signIn = new SignInService(users, sessions, new SignInThrottle(), audit, () => teams.defaultTeamspaceId(), invitations);
  const oidc = config.oidcIssuer
    ? new OidcSignIn(
        config as OidcSettings,
        async (who) => {
          const teamspace = await store.accounts.teamspaceByName(who.teamspace);
          if (!teamspace) {
            log.error({ teamspace: who.teamspace }, 'STACKS_OIDC_ROLE_MAP names a teamspace that does not exist');
            throw new ApiError('forbidden', `Your group maps to the teamspace "${who.teamspace}", which does not exist; ask an administrator.`);
          }
          return users.provision({ issuer: who.issuer, subject: who.subject, username: who.username, teamspaceId: teamspace.id, role: who.role });
        },
        log,
      )
    : null;
  return { users, sessions, signIn, oidc, invitations };
}
