import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface CrawlRouteDeps {
  operations: Pick<Operations, 'parseWebsite' | 'addWebsite'>;
}

/** Website crawling: the offline installation's parse-website endpoint and the v2 add-library one. */
export function mountCrawl(app: Express, s: CrawlRouteDeps): void {
  app.post(
    '/api/parse-website',
    route(async (req, res) => {
      res.status(200).json(await s.operations.parseWebsite(req.body ?? {}, callerOf(res)));
    }),
  );
  app.post(
    '/api/v2/add/website',
    route(async (req, res) => {
      res.status(200).json(await s.operations.addWebsite(req.body ?? {}, callerOf(res)));
    }),
  );
}
