import { z } from 'zod';
import { defineOperation } from './operation.ts';
import { object } from './responses.ts';

/** Liveness, health, readiness, license and this description itself: no key needed. */

const none = z.object({});
const open = { caller: 'open' } as const;

export const pingOperation = defineOperation({
  id: 'ping', summary: 'Liveness', input: none, access: open,
  http: { method: 'get', path: '/ping', from: 'query', status: 200, response: z.object({ status: z.literal('ok'), message: z.literal('pong') }) },
});
export const healthOperation = defineOperation({
  id: 'health', summary: 'License, database and queue health', input: none, access: open,
  http: { method: 'get', path: '/api/health', from: 'query', status: 200, response: object('health report, see docs/mcp.md') },
});
export const readyOperation = defineOperation({
  id: 'ready', summary: 'Readiness (503 not_ready while starting)', input: none, access: open,
  http: { method: 'get', path: '/api/ready', from: 'query', status: 200, response: z.object({ status: z.literal('ready') }) },
  errors: ['not_ready'],
});
export const licenseOperation = defineOperation({
  id: 'license', summary: 'The installed license', input: none, access: open,
  http: { method: 'get', path: '/api/license', from: 'query', status: 200, response: object('{state, message, signedBy, license}') },
});
export const openApiOperation = defineOperation({
  id: 'openapi', summary: 'This description (OpenAPI 3.1)', input: none, access: open,
  http: { method: 'get', path: '/api/openapi.json', from: 'query', status: 200, response: object('OpenAPI 3.1 document') },
});

export const licenseInstallOperation = defineOperation({
  id: 'licenseInstall',
  summary: 'Install a license file (an owner of the default teamspace)',
  input: z.object({ license: z.string().min(2).max(100_000).describe('the license file, as text') }),
  access: { caller: 'key', roles: ['owner'] },
  http: { method: 'post', path: '/api/license', from: 'body', status: 200, response: object('{state, message, signedBy, license}') },
  errors: ['invalid_api_key', 'forbidden', 'license_invalid', 'license_expired'],
});

export const systemOperation = defineOperation({
  id: 'system',
  summary: 'Database size, libraries, snippets, queue depth and the embedder (owner or admin)',
  input: z.object({}),
  access: { caller: 'key', roles: ['owner', 'admin'] },
  http: { method: 'get', path: '/api/system', from: 'query', status: 200, response: object('{version, uptimeSeconds, database: {bytes, walBytes, usageBytes}, libraries, versions, snippets, queue, embedder}') },
  errors: ['invalid_api_key', 'forbidden'],
});
