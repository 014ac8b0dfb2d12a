import type { Express } from 'express';
import type { Operations } from '../../operations/index.ts';
import { route } from '../handler.ts';
import { callerOf } from '../auth.ts';

/** What these routes use. */
export interface TeamRouteDeps {
  operations: Pick<
    Operations,
    | 'keyCreate'
    | 'keyRevoke'
    | 'keysList'
    | 'memberAdd'
    | 'memberRemove'
    | 'memberRole'
    | 'membersList'
    | 'policiesGet'
    | 'policiesUpdate'
    | 'ruleAdd'
    | 'ruleRemove'
    | 'rulesList'
    | 'teamspaceGet'
    | 'teamspaceUpdate'
    | 'usage'
  >;
}

/**
 * Teamspace endpoints: policies, usage, plan and limits, rules, members, keys (the operations in
 * server/operations/teams.ts). Reading needs any key of the teamspace; changing needs an owner or admin key.
 */
export function mountTeams(app: Express, s: TeamRouteDeps): void {
  const o = s.operations;
  app.get(
    '/api/v2/policies',
    route(async (req, res) => res.json(await o.policiesGet(req.query, callerOf(res)))),
  );
  app.patch(
    '/api/v2/policies',
    route(async (req, res) => res.json(await o.policiesUpdate(req.body ?? {}, false, callerOf(res)))),
  );
  app.put(
    '/api/v2/policies',
    route(async (req, res) => res.json(await o.policiesUpdate(req.body ?? {}, true, callerOf(res)))),
  );

  // Usage (never counted: not a metered path).
  app.get(
    '/api/v2/usage',
    route(async (req, res) => res.json(await o.usage(req.query, callerOf(res)))),
  );

  app.get(
    '/api/v2/teamspace',
    route(async (req, res) => res.json(await o.teamspaceGet(req.query, callerOf(res)))),
  );
  app.patch(
    '/api/v2/teamspace',
    route(async (req, res) => res.json(await o.teamspaceUpdate(req.body ?? {}, callerOf(res)))),
  );

  app.get(
    '/api/v2/rules',
    route(async (req, res) => res.json(await o.rulesList(req.query, callerOf(res)))),
  );
  app.post(
    '/api/v2/rules',
    route(async (req, res) => res.status(201).json(await o.ruleAdd(req.body ?? {}, callerOf(res)))),
  );
  app.delete(
    '/api/v2/rules/:id',
    route(async (req, res) => (await o.ruleRemove(req.params, callerOf(res)), res.status(204).end())),
  );

  app.get(
    '/api/v2/members',
    route(async (req, res) => res.json(await o.membersList(req.query, callerOf(res)))),
  );
  app.post(
    '/api/v2/members',
    route(async (req, res) => res.status(201).json(await o.memberAdd(req.body ?? {}, callerOf(res)))),
  );
  app.patch(
    '/api/v2/members/:id',
    route(async (req, res) => res.json(await o.memberRole({ ...(req.body ?? {}), id: req.params.id }, callerOf(res)))),
  );
  app.delete(
    '/api/v2/members/:id',
    route(async (req, res) => (await o.memberRemove(req.params, callerOf(res)), res.status(204).end())),
  );

  app.get(
    '/api/v2/keys',
    route(async (req, res) => res.json(await o.keysList(req.query, callerOf(res)))),
  );
  app.post(
    '/api/v2/keys',
    route(async (req, res) => res.status(201).json(await o.keyCreate(req.body ?? {}, callerOf(res)))),
  );
  app.delete(
    '/api/v2/keys/:id',
    route(async (req, res) => (await o.keyRevoke(req.params, callerOf(res)), res.status(204).end())),
  );
}
