import { z } from 'zod';

/**
 * Response bodies as schemas, for the OpenAPI description (the services build them as the
 * TypeScript types of server/search/answer-types.ts; test/openapi.test.ts checks real answers against these).
 */

export const errorBody = z
  .object({ error: z.string().describe('machine-readable code'), message: z.string().describe('human-readable text') })
  .meta({ id: 'Error' });

const codeExample = z.object({ language: z.string(), code: z.string() });

export const codeSnippet = z
  .object({
    codeTitle: z.string(),
    codeDescription: z.string(),
    codeLanguage: z.string(),
    codeTokens: z.number().int(),
    codeId: z.string().describe('URL of the source location'),
    pageTitle: z.string(),
    codeList: z.array(codeExample),
    isDynamic: z.boolean().optional(),
    sourceFile: z.string().optional(),
  })
  .meta({ id: 'CodeSnippet' });

export const infoSnippet = z
  .object({ content: z.string(), contentTokens: z.number().int(), pageId: z.string().optional(), breadcrumb: z.string().optional() })
  .meta({ id: 'InfoSnippet' });

export const contextResponse = z
  .object({
    codeSnippets: z.array(codeSnippet),
    infoSnippets: z.array(infoSnippet),
    rules: z.object({ global: z.array(z.string()), libraryOwn: z.array(z.string()), libraryTeam: z.array(z.string()) }).optional(),
  })
  .meta({ id: 'ContextResponse' });

const versionStatus = z.enum(['verified', 'prerelease', 'unverified']);

export const searchResponse = z
  .object({
    codeSnippets: z.array(codeSnippet.extend({ libraryId: z.string() })),
    infoSnippets: z.array(infoSnippet.extend({ libraryId: z.string() })),
    rules: z
      .object({
        global: z.array(z.string()),
        libraries: z.array(z.object({ libraryId: z.string(), libraryOwn: z.array(z.string()), libraryTeam: z.array(z.string()) })),
      })
      .optional(),
    version: z
      .object({
        requested: z.string().optional(),
        status: versionStatus,
        libraries: z.array(z.object({ libraryId: z.string(), requested: z.string(), served: z.string().nullable(), status: versionStatus })),
      })
      .optional(),
  })
  .meta({ id: 'SearchContextResponse' });

export const library = z
  .object({
    id: z.string(),
    title: z.string(),
    description: z.string(),
    branch: z.string(),
    lastUpdateDate: z.string(),
    state: z.string(),
    totalTokens: z.number().int(),
    totalSnippets: z.number().int(),
    stars: z.number().int(),
    trustScore: z.number(),
    benchmarkScore: z.number(),
    versions: z.array(z.string()),
    source: z.string(),
  })
  .meta({ id: 'Library' });

export const libsSearchResponse = z.object({ results: z.array(library), searchFilterApplied: z.boolean() }).meta({ id: 'LibrarySearchResult' });
export const librariesResponse = z.object({ libraries: z.array(library), searchFilterApplied: z.boolean() });

/** The library submission result of the /v2/add endpoints. */
export const submission = z.object({ libraryName: z.string(), message: z.string(), jobId: z.number().int().optional() }).meta({ id: 'LibrarySubmission' });

/** The queue answer of parse-website. */
export const queued = z
  .object({ message: z.string(), project: z.string(), queueId: z.number().int(), position: z.number().int().nullable() })
  .meta({ id: 'QueuedJob' });

export const job = z
  .object({
    id: z.number().int(),
    kind: z.string(),
    state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    libraryId: z.string().nullable(),
    version: z.string().nullable().describe('the library version the job indexes when not the current documentation (a version fetch, a Git tag)'),
    position: z.number().int().nullable(),
    progress: z.record(z.string(), z.unknown()),
    error: z.string().nullable(),
    retryable: z
      .boolean()
      .describe(
        'whether POST /api/jobs/{id}/retry may help: a failed or cancelled crawl, Git job or version fetch whose failure was not bad input, a missing tag or an unsupported source',
      ),
    attempts: z.number().int(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Job' });

/** A JSON object whose fields are documented in docs/ (administration answers). */
export const object = (description: string) => z.record(z.string(), z.unknown()).describe(description);
