import type { Express } from 'express';
import { z } from 'zod';
import type { LicenseService } from '../../license/license.ts';
import { route } from '../handler.ts';
import { requirePrincipal } from '../auth.ts';
import { validate } from '../../../lib/validate.ts';
import { MAX_MAX_PAGES, type CrawlService } from '../../sources/website/service.ts';
import { assertSourceEnabled, type SourceCheckServices } from '../../teams/policy.ts';

const url = z.string().trim().min(1).max(2048);
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);

/** POST /api/parse-website. The optional fields' names are ours (the spec names only websiteUrl and maxPages). */
const parseWebsiteBody = z.object({
  websiteUrl: url,
  maxPages: z.coerce.number().int().min(1).max(MAX_MAX_PAGES).optional(),
  /** Display name of the library (its title). */
  name: z.string().trim().min(1).max(200).optional(),
  /** Short description shown in the library list. */
  description: z.string().trim().max(2000).optional(),
  /** Link hops from the start URL (0 = the start page only). Without it, sitemap.xml also seeds the crawl. */
  maxDepth: z.coerce.number().int().min(0).max(100).optional(),
  /** URL path patterns to skip: `*` wildcards, or `/regex/`. */
  excludePatterns: z.array(z.string().trim().min(1).max(500)).max(100).optional(),
  /** Crawl again even when the site is already indexed. */
  force: flag.optional(),
  /** Cron expression for automatic re-crawls (e.g. "0 3 * * *"); null removes the schedule. */
  schedule: z.string().trim().min(1).max(100).nullable().optional(),
});

const addWebsiteBody = z.object({ websiteUrl: url });

export interface CrawlRouteDeps extends SourceCheckServices {
  license: Pick<LicenseService, 'require'>;
  crawler: Pick<CrawlService, 'submit'>;
}

/** Website crawling: the offline installation's parse-website endpoint and the v2 add-library one. */
export function mountCrawl(app: Express, s: CrawlRouteDeps): void {
  app.post(
    '/api/parse-website',
    route(async (req, res) => {
      const principal = requirePrincipal(res, ['owner', 'admin']);
      s.license.require('crawl');
      assertSourceEnabled(s, principal, 'websites');
      const body = validate(parseWebsiteBody, req.body ?? {});
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
      const body = validate(addWebsiteBody, req.body ?? {});
      const r = await s.crawler.submit({ websiteUrl: body.websiteUrl, trigger: 'api' }, principal.memberId);
      res.status(200).json({
        libraryName: r.libraryId,
        message: `Website ${body.websiteUrl} submitted for indexing as ${r.libraryId} (job ${r.jobId}); follow it at /api/jobs/${r.jobId}.`,
      });
    }),
  );
}
