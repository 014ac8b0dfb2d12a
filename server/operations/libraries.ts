import type { LibraryAccessService } from '../teams/library-access.ts';
import type { CrawlService } from '../sources/website/service.ts';
import type { GitSourceService } from '../sources/git/service.ts';
import { ApiError } from '../../lib/errors.ts';
import {
  crawlSitesOperation,
  librariesListOperation,
  libraryDeleteOperation,
  libraryGetOperation,
  libraryRecordOperation,
  libraryRefreshOperation,
  librarySnippetsOperation,
  libraryUpdateOperation,
} from '../contracts/libraries.ts';
import type { binder } from './bind.ts';
import { readerOf } from './search.ts';

export interface LibraryOperationDeps {
  libraries: LibraryAccessService;
  crawler: Pick<CrawlService, 'recrawl' | 'setSchedule' | 'sites'>;
  git: Pick<GitSourceService, 'isGit' | 'refresh'>;
}

/** /api/libraries/{libraryId}: details, snippets, who may read it, delete, refresh; `stacks libraries show|set|delete`. */
export function libraryOperations(bind: ReturnType<typeof binder>, d: LibraryOperationDeps) {
  return {
    libraryGet: bind(libraryGetOperation, (i, p, caller) => d.libraries.view(readerOf(p, caller), i.libraryId)),
    libraryUpdate: bind(libraryUpdateOperation, async (i, p, caller) => {
      const reader = readerOf(p, caller);
      if (i.schedule !== undefined) {
        const lib = await d.libraries.managed(reader, i.libraryId);
        if (lib.sourceType !== 'website')
          throw new ApiError(
            'validation_error',
            `schedule: only a crawled website is crawled again on a schedule; ${lib.id} is not one (refresh a Git repository, import other sources again).`,
          );
        await d.crawler.setSchedule(lib.id, i.schedule);
      }
      return d.libraries.update(reader, i.libraryId, i);
    }),
    librarySnippets: bind(librarySnippetsOperation, (i, p, caller) => d.libraries.snippets(readerOf(p, caller), i.libraryId, i)),
    libraryDelete: bind(libraryDeleteOperation, (i, p, caller) => d.libraries.delete(readerOf(p, caller), i.libraryId)),
    libraryRefresh: bind(libraryRefreshOperation, async (i, p, caller) => {
      const lib = await d.libraries.managed(readerOf(p, caller), i.libraryId);
      if (await d.git.isGit(lib.id)) {
        const r = await d.git.refresh(lib, p?.memberId ?? null);
        return { libraryId: lib.id, jobId: r.jobId, message: `Refresh of ${lib.id} queued (job ${r.jobId}); files whose blob did not change are reused.` };
      }
      // Only a crawled website and a Git repository keep what is needed to fetch them again.
      if (lib.sourceType !== 'website') {
        throw new ApiError('conflict', `${lib.id} is neither a crawled website nor a Git repository: add or import it again (with force) to refresh it.`);
      }
      const job = await d.crawler.recrawl(lib.id, caller.kind === 'local' ? 'cli' : 'api');
      if (!job) throw new ApiError('conflict', `${lib.id} is being crawled right now.`);
      return { libraryId: lib.id, jobId: job.jobId, message: `Re-crawl of ${lib.id} queued (job ${job.jobId}); pages that did not change are kept.` };
    }),
    librariesList: bind(librariesListOperation, async (_i, p, caller) => ({ libraries: await d.libraries.list(readerOf(p, caller)) })),
    libraryRecord: bind(libraryRecordOperation, (i, p, caller) => d.libraries.record(readerOf(p, caller), i.libraryId)),
    crawlSites: bind(crawlSitesOperation, async (i) => {
      const sites = (await d.crawler.sites()).filter((x) => !i.libraryId || x.libraryId === i.libraryId);
      if (i.libraryId && sites.length === 0) throw new ApiError('library_not_found', `${i.libraryId} is not a crawled website.`);
      return { sites };
    }),
  };
}
