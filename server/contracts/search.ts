import { z } from 'zod';
import { defineOperation } from './operation.ts';
import { contextResponse, librariesResponse, libsSearchResponse, searchResponse } from './responses.ts';

/**
 * The search operations: /api/v3/search, /api/v2/context, /api/v2/libs/search, /api/libraries,
 * and the MCP tools and CLI commands over them. The limits are the spec's.
 */

/**
 * A version request: `latest` in any case, or an optional v/V, one to three numeric groups
 * separated by `.` or `_`, and an optional suffix starting with `-` or `+` made of letters,
 * digits, `.` and `-` (the spec's pattern, exactly).
 */
export const VERSION_PATTERN = /^(?:[Ll][Aa][Tt][Ee][Ss][Tt]|[vV]?\d+(?:[._]\d+){0,2}(?:[-+][A-Za-z0-9.-]+)?)$/;

export const CONTEXT_QUERY_MAX = 500;
export const SEARCH_QUERY_MAX = 2000;

/** The first value of a parameter sent once where one is expected (a repeated query parameter arrives as an array). */
const single = (v: unknown) => (Array.isArray(v) && v.length > 0 ? v[0] : v);
/** `true`/`false` in a query string, or a boolean from JSON (MCP, CLI). */
const flag = z.preprocess(single, z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])).default(false);
const format = z.preprocess(single, z.enum(['json', 'txt']).default('txt')).describe('`txt` (default): text/plain in rank order; `json`: JSON');

export const contextInput = z.object({
  libraryId: z.preprocess(single, z.string().trim().min(1).max(500)).describe("'/owner/repo', '/owner/repo/<version>' or '/owner/repo@<version>'"),
  query: z.preprocess(single, z.string().trim().min(1).max(CONTEXT_QUERY_MAX)).describe('the question; used for ranking'),
  type: format,
  fast: flag.describe('skip the learned ranker and the context around hits (fused order)'),
  researchMode: flag.describe('one synthesized answer with citations; needs an API key'),
});
export type ContextInput = z.output<typeof contextInput>;

export const contextOperation = defineOperation({
  id: 'context',
  summary: 'Documentation snippets of one library for a question',
  input: contextInput,
  access: { caller: 'search' },
  http: { method: 'get', path: '/api/v2/context', from: 'query', status: 200, response: contextResponse, text: true },
  errors: ['invalid_library_id', 'invalid_api_key', 'library_not_found', 'research_quota_exceeded', 'rate_limit_exceeded', 'spending_limit_exceeded'],
});

export const searchInput = z.object({
  query: z.preprocess(single, z.string().trim().min(1).max(SEARCH_QUERY_MAX)).describe('the question, in natural language; may include pasted error output'),
  type: format,
  library: z
    .preprocess((v) => (v === undefined ? [] : typeof v === 'string' ? [v] : v), z.array(z.string().trim().min(1).max(120)).max(4))
    .default([])
    .describe('up to 4 library IDs or names (repeat the parameter); none: picked from the question'),
  version: z.preprocess(single, z.string().trim().regex(VERSION_PATTERN, 'must be "latest" or a version such as 4, v4.2, 1_2_3, 1.2.3-rc.1').optional()),
  language: z.preprocess(single, z.string().trim().min(1).max(40).optional()).describe('preferred language of code examples (soft)'),
});
export type SearchInput = z.output<typeof searchInput>;

export const searchOperation = defineOperation({
  id: 'search',
  summary: 'Search up to four libraries (or let Stacks pick them) and return one ranked answer',
  input: searchInput,
  access: { caller: 'search' },
  http: { method: 'get', path: '/api/v3/search', from: 'query', status: 200, response: searchResponse, text: true },
  errors: [
    'invalid_api_key',
    'library_not_found',
    'no_libraries_found',
    'no_documentation_found',
    'rate_limit_exceeded',
    'spending_limit_exceeded',
    'search_failed',
  ],
});

export const libsSearchInput = z.object({
  libraryName: z.preprocess(single, z.string().trim().min(1).max(500)).describe('the library or product name'),
  query: z.preprocess(single, z.string().trim().min(1).max(500)).describe('what the user is trying to do; ranks matching libraries'),
});
export type LibsSearchInput = z.output<typeof libsSearchInput>;

export const libsSearchOperation = defineOperation({
  id: 'libsSearch',
  summary: 'Find library IDs by name (what resolve-library-id calls)',
  input: libsSearchInput,
  access: { caller: 'search' },
  http: { method: 'get', path: '/api/v2/libs/search', from: 'query', status: 200, response: libsSearchResponse },
  errors: ['invalid_api_key', 'no_libraries_found'],
});

export const librariesOperation = defineOperation({
  id: 'libraries',
  summary: 'Every library the caller may see',
  input: z.object({}),
  access: { caller: 'search' },
  http: { method: 'get', path: '/api/libraries', from: 'query', status: 200, response: librariesResponse },
  errors: ['invalid_api_key'],
});
