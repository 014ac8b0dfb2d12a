import { z } from 'zod';
import { ADMINS, defineLocalOperation, defineOperation, idInput } from './operation.ts';
import { object } from './responses.ts';
import { KEY_SCOPES } from '../../lib/model.ts';

/**
 * Teamspace administration: policies, usage, plan, rules, members, keys. Reading needs any key
 * of the teamspace; changing needs an owner or admin key (a member manages only its own keys).
 */

export const PLANS = ['free', 'pro', 'enterprise', 'payg'] as const;
export const ROLES = ['owner', 'admin', 'member'] as const;

const none = z.object({});

export const policiesGetOperation = defineOperation({
  id: 'policiesGet',
  summary: "The teamspace's access policy",
  input: none,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/v2/policies', from: 'query', status: 200, response: object('the policy, see docs/teamspaces.md') },
});

/** PATCH merges into the stored policy; PUT replaces it (missing fields take the defaults); the merged result must match the policy schema. */
export const policiesUpdateOperation = defineOperation({
  id: 'policiesUpdate',
  summary: 'Change the access policy (PATCH merges, PUT replaces)',
  input: z.record(z.string(), z.unknown()).describe('a partial policy, validated against the policy schema after merging'),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'patch', path: '/api/v2/policies', from: 'body', status: 200, response: object('the policy') },
  errors: ['invalid_api_key', 'forbidden'],
});

export const usageInput = z.object({ days: z.coerce.number().int().min(1).max(90).default(30) });
export const usageOperation = defineOperation({
  id: 'usage',
  summary: "Requests of the key's member and of the teamspace per day",
  input: usageInput,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/v2/usage', from: 'query', status: 200, response: object('usage report, see docs/teamspaces.md') },
});

export const teamspaceGetOperation = defineOperation({
  id: 'teamspaceGet',
  summary: 'Plan and limits of the teamspace',
  input: none,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/v2/teamspace', from: 'query', status: 200, response: object('plan settings') },
});

export const teamspaceUpdateInput = z
  .object({
    plan: z.enum(PLANS).optional(),
    includedRequests: z.number().int().min(0).max(1_000_000_000).optional(),
    spendingLimitCents: z.number().int().min(0).nullable().optional(),
    centsPerExtraRequest: z.number().min(0).max(100_000).optional(),
  })
  .strict();
export const teamspaceUpdateOperation = defineOperation({
  id: 'teamspaceUpdate',
  summary: 'Change the plan and limits',
  input: teamspaceUpdateInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'patch', path: '/api/v2/teamspace', from: 'body', status: 200, response: object('plan settings') },
});

export const rulesListOperation = defineOperation({
  id: 'rulesList',
  summary: 'Rules shown with answers',
  input: none,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/v2/rules', from: 'query', status: 200, response: object('{rules: [...]}') },
});

export const ruleAddInput = z
  .object({
    kind: z.enum(['global', 'libraryOwn', 'libraryTeam']),
    libraryId: z.string().min(1).max(500).nullable().optional(),
    text: z.string().min(1).max(4000),
  })
  .strict();
export const ruleAddOperation = defineOperation({
  id: 'ruleAdd',
  summary: 'Add a rule',
  input: ruleAddInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/v2/rules', from: 'body', status: 201, response: object('the rule') },
});

export const ruleRemoveOperation = defineOperation({
  id: 'ruleRemove',
  summary: 'Remove a rule',
  input: idInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'delete', path: '/api/v2/rules/{id}', from: 'path', status: 204, response: null },
  errors: ['not_found'],
});

export const membersListOperation = defineOperation({
  id: 'membersList',
  summary: 'Members of the teamspace',
  input: none,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/v2/members', from: 'query', status: 200, response: object('{members, maxMembers}') },
});

export const memberAddInput = z
  .object({
    name: z.string().min(1).max(100),
    email: z.string().email().nullable().optional(),
    role: z.enum(ROLES).default('member'),
    createKey: z.boolean().default(true),
  })
  .strict();
export const memberAddOperation = defineOperation({
  id: 'memberAdd',
  summary: 'Add a member (and its first key)',
  input: memberAddInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/v2/members', from: 'body', status: 201, response: object('{member, key}') },
  errors: ['member_limit_reached', 'forbidden'],
});

export const memberRoleInput = idInput.extend({ role: z.enum(ROLES) }).strict();
export const memberRoleOperation = defineOperation({
  id: 'memberRole',
  summary: "Change a member's role",
  input: memberRoleInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'patch', path: '/api/v2/members/{id}', from: 'path+body', status: 200, response: object('the member') },
  errors: ['not_found', 'forbidden'],
});

export const memberRemoveOperation = defineOperation({
  id: 'memberRemove',
  summary: 'Remove a member and its keys',
  input: idInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'delete', path: '/api/v2/members/{id}', from: 'path', status: 204, response: null },
  errors: ['not_found', 'forbidden'],
});

export const keysListOperation = defineOperation({
  id: 'keysList',
  summary: 'API keys (a member sees its own)',
  input: none,
  access: { caller: 'key' },
  http: { method: 'get', path: '/api/v2/keys', from: 'query', status: 200, response: object('{keys: [...]}') },
});

export const keyCreateInput = z
  .object({
    name: z.string().min(1).max(100),
    memberId: z.number().int().positive().optional(),
    /** `read`: search, context and MCP only (what an assistant's configuration should hold). */
    scope: z.enum(KEY_SCOPES).optional(),
  })
  .strict();
export const keyCreateOperation = defineOperation({
  id: 'keyCreate',
  summary: 'Create an API key (shown once; a member for itself only)',
  input: keyCreateInput,
  access: { caller: 'key' },
  http: { method: 'post', path: '/api/v2/keys', from: 'body', status: 201, response: object('{id, key, name, memberId, memberName, role, scope}') },
  errors: ['not_found', 'forbidden'],
});

export const keyRevokeOperation = defineOperation({
  id: 'keyRevoke',
  summary: 'Revoke an API key',
  input: idInput,
  access: { caller: 'key' },
  http: { method: 'delete', path: '/api/v2/keys/{id}', from: 'path', status: 204, response: null },
  errors: ['not_found', 'forbidden'],
});

// ---- The operator on the box (`stacks teamspaces|usage|keys`): no HTTP binding, a key is refused. ----

export const teamspacesListOperation = defineLocalOperation({
  id: 'teamspacesList',
  summary: 'Every teamspace of the instance, the default (first) one marked',
  input: none,
  access: { caller: 'local' },
  audit: false,
});

export const teamspaceCreateInput = z
  // The name's shape and the plan are the teamspace service's to check (server/teams/teamspaces.ts).
  .object({
    name: z.string().min(1).max(64),
    owner: z.string().min(1).max(100),
    email: z.string().email().nullable().optional(),
    plan: z.string().min(1).max(20).default('enterprise'),
  })
  .strict();
export const teamspaceCreateOperation = defineLocalOperation({
  id: 'teamspaceCreate',
  summary: "Create a teamspace with its first owner (the owner's API key is answered once)",
  input: teamspaceCreateInput,
  access: { caller: 'local' },
  audit: true,
});

export const memberUsageInput = usageInput
  .extend({ member: z.string().min(1).max(100).optional().describe('whose usage (default: the first owner)') })
  .strict();
export const memberUsageOperation = defineLocalOperation({
  id: 'memberUsage',
  summary: 'Usage of a named member and its teamspace, as GET /api/v2/usage answers a key of that member',
  input: memberUsageInput,
  access: { caller: 'local' },
  audit: false,
});
