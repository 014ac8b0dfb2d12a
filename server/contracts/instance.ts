import { z } from 'zod';
import { ADMINS, defineOperation } from './operation.ts';
import { publicUrlSchema } from '../../lib/public-url.ts';

/** The instance's own settings (its public address) and the first-run checklist. */

const publicUrlView = z.object({
  publicUrl: z.string().nullable().describe('the address generated links and MCP configurations use; null: none set'),
  source: z.enum(['env', 'console']).nullable().describe('env: STACKS_PUBLIC_URL (wins over the console); console: set in Admin'),
  consoleValue: z.string().nullable(),
});

export const settingsGetOperation = defineOperation({
  id: 'settingsGet',
  summary: "The instance's public address and where it comes from",
  input: z.object({}),
  access: { caller: 'open' },
  http: { method: 'get', path: '/api/settings', from: 'query', status: 200, response: publicUrlView },
});

export const settingsUpdateOperation = defineOperation({
  id: 'settingsUpdate',
  summary: "Set the console's public address (the instance's owner; STACKS_PUBLIC_URL still wins when set); null clears it",
  input: z.object({ publicUrl: publicUrlSchema.nullable() }).strict(),
  access: { caller: 'key', roles: ['owner'] },
  http: { method: 'patch', path: '/api/settings', from: 'body', status: 200, response: publicUrlView },
  errors: ['invalid_api_key', 'forbidden'],
});

export const CHECKLIST_ITEMS = ['license', 'library', 'key', 'invite'] as const;

export const gettingStartedOperation = defineOperation({
  id: 'gettingStarted',
  summary: "The first-run checklist of the caller's teamspace, computed from what exists: license, a library, a key, a teammate",
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: {
    method: 'get',
    path: '/api/getting-started',
    from: 'query',
    status: 200,
    response: z.object({
      done: z.boolean().describe('every item is done'),
      items: z.array(z.object({ id: z.enum(CHECKLIST_ITEMS), done: z.boolean(), detail: z.string() })),
    }),
  },
  errors: ['invalid_api_key', 'forbidden'],
});
