import { z } from 'zod';
import { ADMINS, defineOperation, idInput } from './operation.ts';
import { ROLES } from './teams.ts';

/** People: console sign-in (local passwords, the first-start setup link) and user management. */

const username = z.string().trim().min(1).max(64);
const password = z.string().min(10, 'at least 10 characters').max(200);

export const userView = z.object({
  id: z.number().int(),
  username: z.string(),
  memberId: z.number().int(),
  teamspace: z.string(),
  role: z.enum(ROLES),
  kind: z.enum(['local', 'sso']),
  createdAt: z.string(),
  lastSignInAt: z.string().nullable(),
  disabled: z.boolean(),
});

const signedIn = z.object({ user: userView, csrfToken: z.string(), expiresAt: z.string() });

export const sessionCreateOperation = defineOperation({
  id: 'sessionCreate',
  summary: 'Sign in with a user name and password (sets the session cookie)',
  input: z.object({ username, password: z.string().min(1).max(200) }),
  access: { caller: 'open' },
  http: { method: 'post', path: '/api/session', from: 'body', status: 200, response: signedIn },
  errors: ['invalid_credentials', 'rate_limit_exceeded'],
});

export const sessionGetOperation = defineOperation({
  id: 'sessionGet',
  summary: 'Who is signed in (null when nobody), the CSRF token, and whether single sign-on is offered',
  input: z.object({}),
  access: { caller: 'open' },
  http: {
    method: 'get',
    path: '/api/session',
    from: 'query',
    status: 200,
    response: z.object({ user: userView.nullable(), csrfToken: z.string().nullable(), sso: z.boolean() }),
  },
});

export const sessionDeleteOperation = defineOperation({
  id: 'sessionDelete',
  summary: 'Sign out',
  input: z.object({}),
  access: { caller: 'open' },
  http: { method: 'delete', path: '/api/session', from: 'query', status: 204, response: null },
});

export const setupOperation = defineOperation({
  id: 'setup',
  summary: 'Create the first owner with the one-time setup link printed at first start (signs in)',
  input: z.object({ token: z.string().min(10).max(200), username, password }),
  access: { caller: 'open' },
  http: { method: 'post', path: '/api/setup', from: 'body', status: 200, response: signedIn },
  errors: ['forbidden', 'conflict'],
});

export const usersListOperation = defineOperation({
  id: 'usersList',
  summary: "Users of the caller's teamspace",
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'get', path: '/api/users', from: 'query', status: 200, response: z.object({ users: z.array(userView) }) },
  errors: ['invalid_api_key', 'forbidden'],
});

export const userCreateOperation = defineOperation({
  id: 'userCreate',
  summary: 'Create a local user in the teamspace (an owner only by an owner)',
  input: z.object({ username, password, role: z.enum(ROLES).default('member') }),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/users', from: 'body', status: 201, response: userView },
  errors: ['invalid_api_key', 'forbidden', 'conflict', 'member_limit_reached'],
});

export const userUpdateOperation = defineOperation({
  id: 'userUpdate',
  summary: "Disable or enable a user of the teamspace, or set a local user's password",
  input: idInput.extend({ disabled: z.boolean().optional(), password: password.optional() }),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'patch', path: '/api/users/{id}', from: 'path+body', status: 200, response: userView },
  errors: ['invalid_api_key', 'forbidden', 'not_found'],
});
