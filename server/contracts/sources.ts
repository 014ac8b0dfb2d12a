import { z } from 'zod';
import { LIBRARY_VISIBILITIES } from '../../lib/model.ts';
import { ADMINS, defineOperation } from './operation.ts';
import { LIMITS } from './limits.ts';
import { object, queued, submission } from './responses.ts';

/** Adding libraries: import bundles, crawl websites, OpenAPI, llms.txt and document files. */

/** The most pages one crawl may fetch. */
export const MAX_CRAWL_PAGES = 100_000;

const url = z.string().trim().min(1, 'must not be empty').max(2048);
/** A boolean from JSON, or its text form from a query string or a form field. */
/** Who may read the library a request creates; an existing library keeps its own. */
const visibility = z
  .enum(LIBRARY_VISIBILITIES)
  .optional()
  .describe("who may read a new library: teamspace (the caller's teamspace; always for a member) or instance (everyone; the default for owners and admins)");
const flag = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1')]);

export const parseWebsiteInput = z.object({
  websiteUrl: url.describe('the start page; the crawl stays under its folder'),
  maxPages: z.coerce.number().int().min(1).max(MAX_CRAWL_PAGES).optional(),
  name: z.string().trim().min(1).max(200).optional().describe('display name of the library (its title)'),
  description: z.string().trim().max(2000).optional().describe('short description shown in the library list'),
  maxDepth: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .optional()
    .describe('link hops from the start URL (0 = the start page only); without it, sitemap.xml also seeds the crawl'),
  excludePatterns: z.array(z.string().trim().min(1).max(500)).max(100).optional().describe('URL path patterns to skip: globs, or /regex/'),
  force: flag.optional().describe('crawl again even when the site is already indexed'),
  respectRobots: flag.optional().describe("obey robots.txt (default: the server's STACKS_CRAWL_RESPECT_ROBOTS)"),
  schedule: z.string().trim().min(1).max(100).nullable().optional().describe('cron expression for automatic re-crawls; null removes the schedule'),
  visibility,
});
export type ParseWebsiteInput = z.output<typeof parseWebsiteInput>;

export const parseWebsiteOperation = defineOperation({
  id: 'parseWebsite',
  summary: 'Crawl and index a documentation website (offline installation)',
  input: parseWebsiteInput,
  access: { caller: 'key', roles: ADMINS, license: 'crawl', source: 'websites' },
  http: { method: 'post', path: '/api/parse-website', from: 'body', status: 200, response: queued },
  errors: ['invalid_api_key', 'forbidden', 'license_required', 'license_expired', 'license_invalid', 'source_disabled', 'conflict', 'fetch_failed'],
});

export const addWebsiteInput = z.object({ websiteUrl: url, visibility });
export const addWebsiteOperation = defineOperation({
  id: 'addWebsite',
  summary: 'Submit a website for indexing',
  input: addWebsiteInput,
  access: { caller: 'key', license: 'crawl', source: 'websites' },
  http: { method: 'post', path: '/api/v2/add/website', from: 'body', status: 200, response: submission },
  errors: ['invalid_api_key', 'license_required', 'license_expired', 'license_invalid', 'source_disabled', 'conflict', 'fetch_failed'],
});

export const addOpenApiInput = z.object({ openApiUrl: url.describe('URL of an OpenAPI specification in JSON or YAML'), force: flag.optional(), visibility });
export const addOpenApiOperation = defineOperation({
  id: 'addOpenApi',
  summary: 'Submit an OpenAPI specification by URL',
  input: addOpenApiInput,
  access: { caller: 'key', license: true, source: 'websites' },
  http: { method: 'post', path: '/api/v2/add/openapi', from: 'body', status: 200, response: submission },
  errors: ['invalid_api_key', 'license_required', 'source_disabled', 'conflict', 'fetch_failed'],
});

export const addLlmsTxtInput = z.object({ llmstxtUrl: url.describe('URL of an llms.txt or llms-full.txt file'), force: flag.optional(), visibility });
export const addLlmsTxtOperation = defineOperation({
  id: 'addLlmsTxt',
  summary: 'Submit an llms.txt file by URL',
  input: addLlmsTxtInput,
  access: { caller: 'key', license: true, source: 'llmstxt' },
  http: { method: 'post', path: '/api/v2/add/llmstxt', from: 'body', status: 200, response: submission },
  errors: ['invalid_api_key', 'license_required', 'source_disabled', 'conflict', 'fetch_failed'],
});

export const openApiUploadInput = z.object({
  libraryTitle: z.string().trim().max(200).optional(),
  description: z.string().trim().max(2000).optional(),
  force: flag.optional(),
  visibility,
});
export const openApiUploadOperation = defineOperation({
  id: 'addOpenApiUpload',
  summary: 'Upload an OpenAPI specification (owned by the teamspace)',
  input: openApiUploadInput,
  access: { caller: 'key', roles: ADMINS, license: true, source: 'uploaded_files' },
  http: {
    method: 'post',
    path: '/api/v2/add/openapi-upload',
    from: 'multipart',
    status: 200,
    response: submission,
    files: [{ name: 'openapiFile', description: `OpenAPI specification, JSON or YAML, at most ${LIMITS.openApiUploadBytes / 1024 / 1024} MB`, maxCount: 1 }],
  },
  errors: ['invalid_api_key', 'forbidden', 'license_required', 'source_disabled', 'payload_too_large', 'unsupported_media_type', 'conflict'],
});

export const fileUploadInput = z.object({
  collectionName: z.string().trim().max(200).optional(),
  projectTitle: z.string().trim().max(200).optional(),
  description: z.string().trim().max(2000).optional(),
  relativePaths: z.string().max(1_000_000).optional().describe("JSON array of the files' paths, in upload order"),
  force: flag.optional(),
  visibility,
});
export const fileUploadOperation = defineOperation({
  id: 'addFiles',
  summary: 'Upload PDF and DOCX documents',
  input: fileUploadInput,
  access: { caller: 'key', license: true, source: 'uploaded_files' },
  http: {
    method: 'post',
    path: '/api/v2/add/file-upload',
    from: 'multipart',
    status: 200,
    response: submission,
    files: [
      {
        name: 'documentFiles',
        description: `up to ${LIMITS.files} files, ${LIMITS.fileBytes / 1024 / 1024} MB each, ${LIMITS.totalBytes / 1024 / 1024} MB in total`,
        maxCount: LIMITS.files,
      },
    ],
  },
  errors: ['invalid_api_key', 'license_required', 'source_disabled', 'payload_too_large', 'unsupported_media_type', 'conflict'],
});

export const importInput = z.object({ force: flag.optional().describe('re-import libraries whose version is already indexed'), visibility });
export const importOperation = defineOperation({
  id: 'importLibraries',
  summary: 'Import export bundles (JSON body, zip, or multipart field bundleFile/file)',
  input: importInput,
  access: { caller: 'key', roles: ADMINS, license: 'import' },
  http: {
    method: 'post',
    path: '/api/import-libraries',
    from: 'multipart',
    status: 200,
    response: object('{message, queued, skipped: [{project, reason}], jobs: [{project, libraryId, tag, jobId, position, snippets}]}, see docs/import.md'),
    files: [{ name: 'bundleFile', description: 'the export file (.json or .zip); `file` is accepted too', maxCount: 1 }],
  },
  errors: ['invalid_api_key', 'forbidden', 'license_required', 'license_expired', 'license_invalid', 'payload_too_large', 'unsupported_media_type'],
});
