import { z } from 'zod';
import { defineLocalOperation, defineOperation } from './operation.ts';
import { object } from './responses.ts';

/** Liveness, health, readiness, license and this description itself: no key needed. */

const none = z.object({});
const open = { caller: 'open' } as const;

export const pingOperation = defineOperation({
  id: 'ping',
  summary: 'Liveness',
  input: none,
  access: open,
  http: { method: 'get', path: '/ping', from: 'query', status: 200, response: z.object({ status: z.literal('ok'), message: z.literal('pong') }) },
});
export const healthOperation = defineOperation({
  id: 'health',
  summary: 'License, database and queue health',
  input: none,
  access: open,
  http: { method: 'get', path: '/api/health', from: 'query', status: 200, response: object('health report, see docs/mcp.md') },
});
export const readyOperation = defineOperation({
  id: 'ready',
  summary: 'Readiness (503 not_ready while starting)',
  input: none,
  access: open,
  http: { method: 'get', path: '/api/ready', from: 'query', status: 200, response: z.object({ status: z.literal('ready') }) },
  errors: ['not_ready'],
});
export const licenseOperation = defineOperation({
  id: 'license',
  summary: 'The installed license',
  input: none,
  access: open,
  http: { method: 'get', path: '/api/license', from: 'query', status: 200, response: object('{state, message, signedBy, license}') },
});
export const openApiOperation = defineOperation({
  id: 'openapi',
  summary: 'This description (OpenAPI 3.1)',
  input: none,
  access: open,
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

const count = z.number().int().min(0);
const reportBase = {
  version: z.string(),
  uptimeSeconds: z.number().int(),
  embedder: z.object({ id: z.string(), dims: z.number().int() }).nullable(),
};
const queue = z.record(z.string(), count).describe('jobs by state (queued and running: the queue depth)');

/** The instance's totals to its owner; one teamspace's own figures to that teamspace's owners and admins. */
export const systemReportResponse = z.discriminatedUnion('scope', [
  z.object({
    scope: z.literal('instance'),
    ...reportBase,
    database: z.object({ bytes: count, walBytes: count, usageBytes: count }),
    libraries: count.describe('every library of the instance'),
    versions: count,
    snippets: count,
    queue,
  }),
  z.object({
    scope: z.literal('teamspace'),
    teamspace: z.string(),
    ...reportBase,
    libraries: count.describe("libraries the teamspace's members may read"),
    ownedLibraries: count.describe('of those, the ones the teamspace owns'),
    versions: count.describe('served versions of those libraries'),
    snippets: count,
    queue: queue.describe("the teamspace's jobs and those of no teamspace, by state (what GET /api/jobs lists)"),
  }),
]);

export const systemOperation = defineOperation({
  id: 'system',
  summary:
    "Figures: the instance's (database size, libraries, snippets, queue, embedder) to an owner of the default teamspace; the caller's teamspace's to other owners and admins",
  input: z.object({}),
  access: { caller: 'key', roles: ['owner', 'admin'] },
  http: { method: 'get', path: '/api/system', from: 'query', status: 200, response: systemReportResponse },
  errors: ['invalid_api_key', 'forbidden'],
});

/** `stacks mcp` on the data dir: whom the stdio session acts for (its --api-key, or anonymous where anonymous search is allowed). */
export const stdioCallerOperation = defineLocalOperation({
  id: 'stdioCaller',
  summary: 'The caller of an MCP session over stdio: the key given, checked once at start',
  input: z.object({ apiKey: z.string().min(1).max(1000).nullable() }),
  access: { caller: 'local' },
  audit: false,
});
