import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { requirePrincipal } from '../auth.ts';
import { validate } from '../../contracts/validate.ts';
import { addWebsiteInput, parseWebsiteInput } from '../../contracts/sources.ts';
import { assertSourceEnabled } from '../../teams/policy.ts';

/** Website crawling: the offline installation's parse-website endpoint and the v2 add-library one. */
export function mountCrawl(app: Express, s: Services): void {
  app.post(
    '/api/parse-website',
    route(async (req, res) => {
      const principal = requirePrincipal(res, ['owner', 'admin']);
      s.license.require('crawl');
      assertSourceEnabled(s, principal, 'websites');
      const body = validate(parseWebsiteInput, req.body ?? {});
      const r = await s.crawler.submit({ ...body, trigger: 'api' }, principal.memberId);
      res.status(200).json({
        message: r.position === null ? `Crawl of ${body.websiteUrl} started.` : `Crawl of ${body.websiteUrl} queued at position ${r.position}.`,
        project: r.libraryId,
        queueId: r.jobId,
        position: r.position,
      });
    }),
  );

  app.post(
    '/api/v2/add/website',
    route(async (req, res) => {
      const principal = requirePrincipal(res);
      s.license.require('crawl');
      assertSourceEnabled(s, principal, 'websites');
      const body = validate(addWebsiteInput, req.body ?? {});
      const r = await s.crawler.submit({ websiteUrl: body.websiteUrl, trigger: 'api' }, principal.memberId);
      res.status(200).json({
        libraryName: r.libraryId,
        message: `Website ${body.websiteUrl} submitted for indexing as ${r.libraryId} (job ${r.jobId}); follow it at /api/jobs/${r.jobId}.`,
      });
    }),
  );
}
