import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface GitRouteDeps {
  operations: Pick<Operations, 'parseRepo' | 'projectRefresh' | 'gitHostsList' | 'gitHostAdd' | 'gitHostRemove'>;
}

/** Git repositories (docs/git.md): parse, refresh, and the credentials of Git hosts. */
export function mountGit(app: Express, s: GitRouteDeps): void {
  app.post(
    '/api/parse',
    route(async (req, res) => res.status(200).json(await s.operations.parseRepo(req.body ?? {}, callerOf(res)))),
  );
  app.post(
    '/api/projects/:owner/:repo/refresh',
    route(async (req, res) =>
      res.status(202).json(await s.operations.projectRefresh({ libraryId: `/${String(req.params.owner)}/${String(req.params.repo)}` }, callerOf(res))),
    ),
  );
  app.get(
    '/api/git-hosts',
    route(async (req, res) => res.json(await s.operations.gitHostsList(req.query, callerOf(res)))),
  );
  app.post(
    '/api/git-hosts',
    route(async (req, res) => res.json(await s.operations.gitHostAdd(req.body ?? {}, callerOf(res)))),
  );
  app.delete(
    '/api/git-hosts/:host',
    route(async (req, res) => (await s.operations.gitHostRemove({ ...req.query, host: String(req.params.host) }, callerOf(res)), res.status(204).end())),
  );
}
