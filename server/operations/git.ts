import type { GitSourceService } from '../sources/git/service.ts';
import type { GitCredentials } from '../sources/git/credentials.ts';
import type { LibraryAccessService } from '../teams/library-access.ts';
import type { Principal } from '../../lib/model.ts';
import type { PolicySourceType } from '../contracts/policy.ts';
import { ApiError } from '../../lib/errors.ts';
import { gitHostAddOperation, gitHostRemoveOperation, gitHostsListOperation, parseRepoOperation, projectRefreshOperation } from '../contracts/git.ts';
import type { binder } from './bind.ts';
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
      if (p && !d.sourceEnabled(p, source)) throw new ApiError('source_disabled', `Adding ${source} sources is disabled by this teamspace's policy; an owner or admin can enable it (PATCH /api/v2/policies).`);
      const r = await d.git.submit(i, who);
      return { message: r.position === null ? `Indexing of ${i.repoUrl} started as ${r.libraryId}.` : `Indexing of ${i.repoUrl} queued as ${r.libraryId} at position ${r.position}.`, project: r.libraryId, queueId: r.jobId, position: r.position };
    }),
    projectRefresh: bind(projectRefreshOperation, (i, p, caller) => {
      const lib = d.libraries.refreshable(readerOf(p, caller), i.libraryId);
      const r = d.git.refresh(lib, p?.memberId ?? null);
      return { message: `Refresh of ${lib.id} queued (job ${r.jobId}); files whose blob did not change are reused.`, project: lib.id, queueId: r.jobId, position: r.position };
    }),
    gitHostsList: bind(gitHostsListOperation, () => ({ hosts: d.gitCredentials.list() })),
    gitHostAdd: bind(gitHostAddOperation, (i) => d.gitCredentials.add(i)),
    gitHostRemove: bind(gitHostRemoveOperation, (i) => d.gitCredentials.remove(i.host)),
  };
}
