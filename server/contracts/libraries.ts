import { z } from 'zod';
import { LIBRARY_VISIBILITIES } from '../../lib/model.ts';
import { ADMINS, defineLocalOperation, defineOperation } from './operation.ts';

/** One library's details and who may read it: GET and PATCH /api/libraries/{libraryId}. */

const libraryId = z.string().trim().min(1).max(500).describe("'/owner/repo' (in the path as /api/libraries/owner/repo)");
const teamspaceName = z.string().trim().min(1).max(64);

export const libraryView = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  sourceType: z.string(),
  sourceUrl: z.string().nullable(),
  teamspace: z.string().nullable().describe('the owner teamspace'),
  visibility: z.enum(LIBRARY_VISIBILITIES),
  grants: z.array(z.string()).optional().describe('teamspaces granted read access; shown to those who may change it'),
  schedule: z.string().nullable().optional().describe("a crawled website's re-crawl schedule"),
  stars: z.number().int().nullable(),
  trustScore: z.number().nullable(),
  verified: z.boolean(),
  license: z.string().nullable().describe("SPDX identifier; detected from a Git repository's LICENSE file unless an admin set it"),
  repoUrl: z.string().optional().describe('the repository of a library added from Git'),
  versions: z.array(z.object({ tag: z.string(), state: z.string(), snippets: z.number().int(), tokens: z.number().int(), updatedAt: z.string() })),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const libraryGetOperation = defineOperation({
  id: 'libraryGet',
  summary: 'One library: versions, owner teamspace and visibility',
  input: z.object({ libraryId }),
  access: { caller: 'search' },
  http: { method: 'get', path: '/api/libraries/{libraryId}', from: 'path', status: 200, response: libraryView },
  errors: ['invalid_api_key', 'library_not_found'],
});

export const libraryUpdateInput = z
  .object({
    libraryId,
    visibility: z
      .enum(LIBRARY_VISIBILITIES)
      .optional()
      .describe('teamspace: its teamspace and the granted ones; instance: every key, and anonymous callers when anonymous search is on'),
    grants: z.array(teamspaceName).max(100).optional().describe('teamspaces (by name) that may read a teamspace library besides its owner; replaces the list'),
    title: z.string().trim().min(1).max(200).optional(),
    description: z.string().trim().max(2000).optional(),
    schedule: z.string().trim().min(1).max(100).nullable().optional().describe("a crawled website's re-crawl schedule (cron); null removes it"),
    stars: z.coerce
      .number()
      .int()
      .min(0)
      .max(100_000_000)
      .nullable()
      .optional()
      .describe('trust metadata: a star count (stars mean nothing offline; admins set it); null clears it'),
    trustScore: z.coerce.number().min(0).max(10).nullable().optional().describe('trust metadata: 0-10; null clears it'),
    verified: z
      .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
      .optional()
      .describe('trust metadata: reviewed by an admin'),
    license: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9.+() -]+$/, 'an SPDX identifier or expression')
      .nullable()
      .optional()
      .describe("trust metadata: SPDX identifier (e.g. MIT); null clears it (a Git repository's is then detected again)"),
  })
  .refine((v) => Object.keys(v).some((k) => k !== 'libraryId' && v[k as keyof typeof v] !== undefined), {
    message: 'Give at least one of visibility, grants, title, description, schedule, stars, trustScore, verified, license.',
  });

export const libraryUpdateOperation = defineOperation({
  id: 'libraryUpdate',
  summary: "Change who may read a library, its title and description, a website's re-crawl schedule, its trust metadata (owner or admin of its teamspace)",
  input: libraryUpdateInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'patch', path: '/api/libraries/{libraryId}', from: 'path+body', status: 200, response: libraryView },
  errors: ['invalid_api_key', 'forbidden', 'library_not_found'],
});

export const librarySnippetsOperation = defineOperation({
  id: 'librarySnippets',
  summary: 'The snippets a library serves, a page at a time',
  input: z.object({
    libraryId,
    tag: z.string().trim().min(1).max(100).optional().describe('a version tag; default: the current documentation'),
    after: z.coerce.number().int().positive().optional().describe('the `next` of the previous page'),
    limit: z.coerce.number().int().min(1).max(200).default(25),
  }),
  access: { caller: 'search' },
  http: {
    method: 'get',
    path: '/api/libraries/{libraryId}/snippets',
    from: 'query',
    status: 200,
    response: z.object({
      libraryId: z.string(),
      tag: z.string(),
      total: z.number().int(),
      next: z.number().int().nullable(),
      snippets: z.array(
        z.object({
          id: z.number().int(),
          kind: z.enum(['code', 'info']),
          title: z.string(),
          source: z.string(),
          tokens: z.number().int(),
          text: z.string(),
          code: z.array(z.object({ language: z.string(), code: z.string() })),
        }),
      ),
    }),
  },
  errors: ['invalid_api_key', 'library_not_found'],
});

export const libraryDeleteOperation = defineOperation({
  id: 'libraryDelete',
  summary: 'Delete a library with every version (owner or admin of its teamspace)',
  input: z.object({ libraryId }),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'delete', path: '/api/libraries/{libraryId}', from: 'path', status: 204, response: null },
  errors: ['invalid_api_key', 'forbidden', 'library_not_found'],
});

export const libraryRefreshOperation = defineOperation({
  id: 'libraryRefresh',
  summary: 'Index a library again from its source: re-crawl a website, refresh a Git repository',
  input: z.object({ libraryId }),
  access: { caller: 'key', roles: ADMINS, license: true },
  http: {
    method: 'post',
    path: '/api/libraries/{libraryId}/refresh',
    from: 'path',
    status: 202,
    response: z.object({ libraryId: z.string(), jobId: z.number().int(), message: z.string() }),
  },
  errors: ['invalid_api_key', 'forbidden', 'library_not_found', 'conflict', 'license_required'],
});

// ---- The operator on the box (`stacks libraries list|show`, `stacks crawl-schedule`): no HTTP binding. ----

export const librariesListOperation = defineLocalOperation({
  id: 'librariesList',
  summary: 'Every library of the instance, served or not, as GET /api/libraries/{libraryId} shows each',
  input: z.object({}),
  access: { caller: 'local' },
  audit: false,
});

export const libraryRecordOperation = defineLocalOperation({
  id: 'libraryRecord',
  summary: 'One library as stored, with every version (building, served and replaced)',
  input: z.object({ libraryId }),
  access: { caller: 'local' },
  audit: false,
});

export const crawlSitesOperation = defineLocalOperation({
  id: 'crawlSites',
  summary: 'Crawled websites with their start address and re-crawl schedule',
  input: z.object({ libraryId: libraryId.optional() }),
  access: { caller: 'local' },
  audit: false,
});
