import { z } from 'zod';
import { ADMINS, defineOperation } from './operation.ts';

/** Declarative sources: POST /api/sources/reconcile, `stacks sources reconcile`. */

const entry = z.object({ libraryId: z.string(), jobId: z.number().int() });
export const reconcileReport = z.object({
  file: z.string(),
  found: z.boolean().describe('false: the data dir has no sources.yaml (nothing declared, nothing pruned)'),
  created: z.array(entry),
  updated: z.array(z.object({ libraryId: z.string(), jobId: z.number().int().nullable() })),
  unchanged: z.array(z.string()),
  pruned: z.array(z.string()).describe('libraries the file had created and no longer lists: deleted'),
  adopted: z.array(z.string()).describe('libraries that existed before the file declared them (never deleted by it)'),
  released: z.array(z.string()),
  errors: z.array(z.object({ libraryId: z.string(), line: z.number().int(), error: z.string() })),
});

export const reconcileOperation = defineOperation({
  id: 'sourcesReconcile',
  summary:
    'Reconcile <data dir>/sources.yaml now: create, update and prune the declared websites, llms.txt files and OpenAPI documents (an invalid file is refused whole, with line numbers)',
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/sources/reconcile', from: 'body', status: 200, response: reconcileReport },
  errors: ['invalid_api_key', 'forbidden', 'conflict'],
});
