import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { route } from '../app.ts';
import { callerOf } from '../auth.ts';

/** Website crawling: the offline installation's parse-website endpoint and the v2 add-library one. */
export function mountCrawl(app: Express, s: Services): void {
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
