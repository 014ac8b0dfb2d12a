import { z } from 'zod';
import { ADMINS, defineOperation } from './operation.ts';

/** The audit log: GET /api/audit, `stacks audit`. */

const instant = z
  .string()
  .trim()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'an ISO 8601 date or time, e.g. 2026-11-25 or 2026-11-25T10:00:00Z')
  .transform((v) => new Date(v).toISOString());

export const auditListInput = z.object({
  since: instant.optional().describe('entries at or after this time'),
  until: instant.optional().describe('entries before this time'),
  actor: z.string().trim().min(1).max(200).optional().describe('a member or user name, key:<id>, operator or anonymous'),
  action: z
    .string()
    .trim()
    .min(1)
    .max(60)
    .optional()
    .describe('an operation id such as keyCreate or importLibraries, or authRefused, libraryDelete, licenseInstall, teamspaceCreate'),
  before: z.coerce.number().int().positive().optional().describe('the `next` of the previous page'),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const auditEntry = z.object({
  id: z.number().int(),
  at: z.string(),
  lastAt: z.string(),
  count: z.number().int(),
  actor: z.object({ kind: z.enum(['key', 'user', 'operator', 'anonymous']), keyId: z.number().int().optional(), name: z.string().optional() }),
  teamspace: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  sourceIp: z.string().nullable(),
  outcome: z.enum(['ok', 'refused', 'failed']),
  detail: z.record(z.string(), z.unknown()).nullable(),
});

export const auditListOperation = defineOperation({
  id: 'auditList',
  summary: "Audit entries of the caller's teamspace, newest first (the default teamspace also sees instance-level ones)",
  input: auditListInput,
  access: { caller: 'key', roles: ADMINS },
  http: {
    method: 'get',
    path: '/api/audit',
    from: 'query',
    status: 200,
    response: z.object({ entries: z.array(auditEntry), next: z.number().int().nullable() }),
  },
  errors: ['invalid_api_key', 'forbidden'],
});
