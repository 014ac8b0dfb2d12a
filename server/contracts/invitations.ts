import { z } from 'zod';
import { ADMINS, defineOperation, idInput } from './operation.ts';
import { ROLES } from './teams.ts';

/**
 * Console invitations: an owner or admin invites a person into their teamspace (an owner only by
 * an owner); the person opens the one-time link, chooses a password and is signed in.
 */

const token = z.string().min(10).max(200);

export const invitationView = z.object({
  id: z.number().int(),
  teamspace: z.string(),
  role: z.enum(ROLES),
  username: z.string().nullable().describe('the user name the invitee gets; null: they choose it'),
  email: z.string().nullable(),
  invitedBy: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  state: z.enum(['open', 'used', 'revoked', 'expired']),
  usedAt: z.string().nullable(),
});

export const invitationCreated = invitationView.extend({
  token: z.string().describe('shown once; only its hash is stored'),
  path: z.string().describe('the console path to open: /#/invite/<token>'),
  url: z.string().nullable().describe('path on the public address (STACKS_PUBLIC_URL or the console setting); null when none is set'),
});

export const invitationCreateOperation = defineOperation({
  id: 'invitationCreate',
  summary: 'Invite a person into the teamspace: a one-time link to a console account (an owner only by an owner)',
  input: z
    .object({
      role: z.enum(ROLES).default('member'),
      username: z.string().trim().min(1).max(64).optional().describe('fixes the user name; without it the invitee chooses one'),
      email: z.string().trim().email().max(200).optional().describe('for the record; Stacks sends no e-mail'),
      days: z.number().int().min(1).max(30).default(7).describe('days the link works'),
    })
    .strict(),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/invitations', from: 'body', status: 201, response: invitationCreated },
  errors: ['invalid_api_key', 'forbidden', 'conflict'],
});

export const invitationsListOperation = defineOperation({
  id: 'invitationsList',
  summary: "The teamspace's invitations, newest first (never their links)",
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'get', path: '/api/invitations', from: 'query', status: 200, response: z.object({ invitations: z.array(invitationView) }) },
  errors: ['invalid_api_key', 'forbidden'],
});

export const invitationRevokeOperation = defineOperation({
  id: 'invitationRevoke',
  summary: 'Revoke an open invitation of the teamspace (its link stops working)',
  input: idInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'delete', path: '/api/invitations/{id}', from: 'path', status: 200, response: invitationView },
  errors: ['invalid_api_key', 'forbidden', 'not_found', 'conflict'],
});

export const invitationPreviewOperation = defineOperation({
  id: 'invitationPreview',
  summary: 'What an invitation link offers (teamspace, role, fixed user name), or why it no longer works',
  input: z.object({ token }),
  access: { caller: 'open' },
  http: {
    method: 'post',
    path: '/api/invitations/preview',
    from: 'body',
    status: 200,
    response: z.object({ teamspace: z.string(), role: z.enum(ROLES), username: z.string().nullable(), expiresAt: z.string(), sso: z.boolean() }),
  },
  errors: ['forbidden'],
});

export const invitationAcceptOperation = defineOperation({
  id: 'invitationAccept',
  summary: 'Accept an invitation: create the account with a password (and a user name when the invitation has none) and sign in',
  input: z.object({ token, username: z.string().trim().min(1).max(64).optional(), password: z.string().min(10, 'at least 10 characters').max(200) }),
  access: { caller: 'open' },
  http: {
    method: 'post',
    path: '/api/invitations/accept',
    from: 'body',
    status: 200,
    response: z.object({ user: z.object({}).passthrough(), csrfToken: z.string(), expiresAt: z.string() }),
  },
  errors: ['forbidden', 'conflict', 'member_limit_reached'],
  // Who took an invitation (and who tried a spent one) belongs in the audit log, although no key calls it.
  audit: true,
});
