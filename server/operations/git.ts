import type { GitSourceService } from '../sources/git/service.ts';
import type { CredentialOwner, GitCredentials } from '../sources/git/credentials.ts';
import type { LibraryAccessService } from '../teams/library-access.ts';
import type { Principal } from '../../lib/model.ts';
import type { PolicySourceType } from '../contracts/policy.ts';
import { ApiError } from '../../lib/errors.ts';
import { gitHostAddOperation, gitHostRemoveOperation, gitHostsListOperation, parseRepoOperation, projectRefreshOperation } from '../contracts/git.ts';
import type { binder } from './bind.ts';
import { isInstanceOwner, type Caller } from './admit.ts';
import { readerOf } from './search.ts';
import { submitterFor } from './submitter.ts';

export interface GitOperationDeps {
  git: GitSourceService;
  gitCredentials: GitCredentials;
  libraries: LibraryAccessService;
  defaultTeamspaceId(): number;
  sourceEnabled(principal: Principal | null, source: PolicySourceType): boolean;
}

/** POST /api/parse, POST /api/projects/{owner}/{repo}/refresh, /api/git-hosts; `stacks add git`, `stacks git-hosts`. */
export function gitOperations(bind: ReturnType<typeof binder>, d: GitOperationDeps) {
  return {
    parseRepo: bind(parseRepoOperation, async (i, p) => {
      const who = submitterFor(p, i.visibility, d.defaultTeamspaceId);
      // A repository read by the whole instance is a public source; one kept in a teamspace a private one (server/teams/policy-filter.ts).
      const source: PolicySourceType = who.visibility === 'instance' ? 'public_repos' : 'private_sources';
      if (p && !d.sourceEnabled(p, source))
        throw new ApiError(
          'source_disabled',
          `Adding ${source} sources is disabled by this teamspace's policy; an owner or admin can enable it (PATCH /api/v2/policies).`,
        );
      const r = await d.git.submit(i, who);
      return {
        message:
          r.position === null
            ? `Indexing of ${i.repoUrl} started as ${r.libraryId}.`
            : `Indexing of ${i.repoUrl} queued as ${r.libraryId} at position ${r.position}.`,
        project: r.libraryId,
        queueId: r.jobId,
        position: r.position,
      };
    }),
    projectRefresh: bind(projectRefreshOperation, async (i, p, caller) => {
      const lib = await d.libraries.refreshable(readerOf(p, caller), i.libraryId);
      const r = await d.git.refresh(lib, p?.memberId ?? null);
      return {
        message: `Refresh of ${lib.id} queued (job ${r.jobId}); files whose blob did not change are reused.`,
        project: lib.id,
        queueId: r.jobId,
        position: r.position,
      };
    }),
    gitHostsList: bind(gitHostsListOperation, async (_i, p, caller) => ({
      hosts: (await Promise.all(visibleOwners(p, caller, d).map((o) => d.gitCredentials.list(o)))).flat(),
    })),
    gitHostAdd: bind(gitHostAddOperation, (i, p, caller) => d.gitCredentials.add(ownerFor(i.scope, p, caller, d), i)),
    gitHostRemove: bind(gitHostRemoveOperation, (i, p, caller) => d.gitCredentials.remove(ownerFor(i.scope, p, caller, d), i.host)),
  };
}

/**
 * Whose credentials a change acts on: a key's teamspace's, or with scope `instance` the
 * instance's, which only the instance's owner manages (isInstanceOwner). The CLI has no
 * teamspace: it acts for the instance.
 */
function ownerFor(scope: 'teamspace' | 'instance' | undefined, p: Principal | null, caller: Caller, d: GitOperationDeps): CredentialOwner {
  if (!p) {
    if (scope === 'teamspace')
      throw new ApiError(
        'validation_error',
        "scope: the CLI manages the instance's credentials; a teamspace's are managed by its owners and admins over the API.",
      );
    return null;
  }
  if (scope !== 'instance') return p.teamspaceId;
  if (!isInstanceOwner(caller, p, d.defaultTeamspaceId()))
    throw new ApiError('forbidden', "The instance's Git host credentials are managed by the instance's owner; store your teamspace's own (leave scope out).");
  return null;
}

/** Whose credentials a caller lists: its teamspace's, and the instance's for the instance's owner and the CLI; never another teamspace's. */
function visibleOwners(p: Principal | null, caller: Caller, d: GitOperationDeps): CredentialOwner[] {
  if (!p) return [null];
  return isInstanceOwner(caller, p, d.defaultTeamspaceId()) ? [p.teamspaceId, null] : [p.teamspaceId];
}
