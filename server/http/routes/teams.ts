import type { Express } from 'express';
import { z } from 'zod';
import type { TeamService } from '../../teams/index.ts';
import { route } from '../handler.ts';
import { requirePrincipal } from '../auth.ts';
import { validate } from '../../../lib/validate.ts';
import { PLANS } from '../../teams/plans.ts';

const admins = ['owner', 'admin'] as const;
const roleSchema = z.enum(['owner', 'admin', 'member']);
const idParam = z.object({ id: z.coerce.number().int().positive() });

type Teams = Pick<TeamService, 'policies' | 'usage' | 'plans' | 'rules' | 'members'>;

export interface TeamRouteDeps {
  teams: Teams;
}

/**
 * Teamspace endpoints: policies, usage, plan and limits, rules, members, keys.
 * Reading needs any key of the teamspace; changing needs an owner or admin key.
 */
export function mountTeams(app: Express, s: TeamRouteDeps): void {
  const t = s.teams;
  mountPolicies(app, t);
  mountUsageAndPlan(app, t);
  mountRules(app, t);
  mountMembers(app, t);
  mountKeys(app, t);
}

function mountPolicies(app: Express, t: Teams): void {
  app.get(
    '/api/v2/policies',
    route((_req, res) => {
      const p = requirePrincipal(res);
      res.json(t.policies.view(p.teamspaceId));
    }),
  );
  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/api/v2/policies',
      route((req, res) => {
        const p = requirePrincipal(res, [...admins]);
        t.policies.update(p.teamspaceId, req.body ?? {}, method === 'put');
        res.json(t.policies.view(p.teamspaceId));
      }),
    );
  }
}

function mountUsageAndPlan(app: Express, t: Teams): void {
  // ---- usage (never counted: not a metered path) ----
  app.get(
    '/api/v2/usage',
    route((req, res) => {
      const p = requirePrincipal(res);
      const q = validate(z.object({ days: z.coerce.number().int().min(1).max(90).default(30) }), req.query);
      res.json(t.usage.report(p, q.days));
    }),
  );

  // ---- plan and limits ----
  app.get(
    '/api/v2/teamspace',
    route((_req, res) => {
      const p = requirePrincipal(res);
      res.json(t.plans.get(p.teamspaceId));
    }),
  );
  app.patch(
    '/api/v2/teamspace',
    route((req, res) => {
      const p = requirePrincipal(res, [...admins]);
      const body = validate(
        z
          .object({
            plan: z.enum(PLANS as [string, ...string[]]).optional(),
            includedRequests: z.number().int().min(0).max(1_000_000_000).optional(),
            spendingLimitCents: z.number().int().min(0).nullable().optional(),
            centsPerExtraRequest: z.number().min(0).max(100_000).optional(),
          })
          .strict(),
        req.body ?? {},
      );
      res.json(t.plans.update(p.teamspaceId, body as Parameters<typeof t.plans.update>[1]));
    }),
  );
}

function mountRules(app: Express, t: Teams): void {
  app.get(
    '/api/v2/rules',
    route((_req, res) => {
      const p = requirePrincipal(res);
      res.json({ rules: t.rules.list(p.teamspaceId) });
    }),
  );
  app.post(
    '/api/v2/rules',
    route((req, res) => {
      const p = requirePrincipal(res, [...admins]);
      const body = validate(
        z.object({ kind: z.enum(['global', 'libraryOwn', 'libraryTeam']), libraryId: z.string().min(1).max(500).nullable().optional(), text: z.string().min(1).max(4000) }).strict(),
        req.body ?? {},
      );
      res.status(201).json(t.rules.add(p.teamspaceId, body));
    }),
  );
  app.delete(
    '/api/v2/rules/:id',
    route((req, res) => {
      const p = requirePrincipal(res, [...admins]);
      t.rules.remove(p.teamspaceId, validate(idParam, req.params).id);
      res.status(204).end();
    }),
  );
}

function mountMembers(app: Express, t: Teams): void {
  app.get(
    '/api/v2/members',
    route((_req, res) => {
      const p = requirePrincipal(res);
      res.json({ members: t.members.list(p.teamspaceId), maxMembers: t.members.maxMembers() });
    }),
  );
  app.post(
    '/api/v2/members',
    route((req, res) => {
      const p = requirePrincipal(res, [...admins]);
      const body = validate(
        z.object({ name: z.string().min(1).max(100), email: z.string().email().nullable().optional(), role: roleSchema.default('member'), createKey: z.boolean().default(true) }).strict(),
        req.body ?? {},
      );
      const { member, key } = t.members.add(p.teamspaceId, p.role, body);
      res.status(201).json({ member, key: key ? { id: key.id, key: key.key, name: key.name } : null });
    }),
  );
  app.patch(
    '/api/v2/members/:id',
    route((req, res) => {
      const p = requirePrincipal(res, [...admins]);
      const body = validate(z.object({ role: roleSchema }).strict(), req.body ?? {});
      res.json(t.members.setRole(p.teamspaceId, p.role, validate(idParam, req.params).id, body.role));
    }),
  );
  app.delete(
    '/api/v2/members/:id',
    route((req, res) => {
      const p = requirePrincipal(res, [...admins]);
      t.members.remove(p.teamspaceId, p.role, validate(idParam, req.params).id);
      res.status(204).end();
    }),
  );
}

/** Keys: owners and admins manage all keys of the teamspace; a member sees and revokes its own. */
function mountKeys(app: Express, t: Teams): void {
  app.get(
    '/api/v2/keys',
    route((_req, res) => {
      const p = requirePrincipal(res);
      const mine = p.role === 'member' ? p.memberId : undefined;
      res.json({ keys: t.members.listKeys(p.teamspaceId, mine) });
    }),
  );
  app.post(
    '/api/v2/keys',
    route((req, res) => {
      const p = requirePrincipal(res, [...admins]);
      const body = validate(z.object({ name: z.string().min(1).max(100), memberId: z.number().int().positive().optional() }).strict(), req.body ?? {});
      const k = t.members.createKey(p.teamspaceId, p.role, body.memberId ?? p.memberId, body.name);
      res.status(201).json({ id: k.id, key: k.key, name: k.name, memberId: k.memberId, memberName: k.memberName, role: k.role });
    }),
  );
  app.delete(
    '/api/v2/keys/:id',
    route((req, res) => {
      const p = requirePrincipal(res);
      t.members.revokeKey(p.teamspaceId, p.role, validate(idParam, req.params).id, p.role === 'member' ? p.memberId : undefined);
      res.status(204).end();
    }),
  );
}
