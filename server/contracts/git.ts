import { z } from 'zod';
import { LIBRARY_VISIBILITIES } from '../../lib/model.ts';
import { ADMINS, defineOperation } from './operation.ts';
import { queued } from './responses.ts';

/** Git repositories as a source: parse, refresh, and the credentials of Git hosts (docs/git.md). */

const flag = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1')]);
const paths = (what: string) => z.array(z.string().trim().min(1).max(300)).max(100).optional().describe(what);

export const parseRepoInput = z.object({
  repoUrl: z.string().trim().min(1).max(2048).describe('https://, http://, ssh:// or git:// repository URL, or git@host:owner/repo.git'),
  branch: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^(?!-)[^\s~^:?*[\\]+$/, 'a branch or tag name')
    .optional()
    .describe('branch or tag; default: the default branch'),
  folders: paths('only these folders (a sparse checkout; files at the root are read too)'),
  excludeFolders: paths('folders to leave out (globs), besides the default exclusions'),
  excludeFiles: paths('files to leave out (globs on the path, or on the name when the glob has no /)'),
  force: flag.optional().describe('index again (every file) when the repository is already indexed'),
  visibility: z
    .enum(LIBRARY_VISIBILITIES)
    .optional()
    .describe('who may read the new library: teamspace (always for a member) or instance (default for owners and admins)'),
});

export const parseRepoOperation = defineOperation({
  id: 'parseRepo',
  summary: 'Index a Git repository (docs, tags as versions, a source-code index); answers the queue body of parse-website',
  input: parseRepoInput,
  access: { caller: 'key', license: true },
  http: { method: 'post', path: '/api/parse', from: 'body', status: 200, response: queued },
  errors: [
    'invalid_api_key',
    'forbidden',
    'license_required',
    'license_expired',
    'license_invalid',
    'source_disabled',
    'conflict',
    'fetch_failed',
    'payload_too_large',
  ],
});

export const projectRefreshOperation = defineOperation({
  id: 'projectRefresh',
  summary: "Index a Git repository's branch again; only files whose blob changed are parsed",
  input: z.object({ libraryId: z.string().trim().min(1).max(500).describe("'/owner/repo' (in the path as /api/projects/owner/repo/refresh)") }),
  access: { caller: 'key', license: true },
  http: { method: 'post', path: '/api/projects/{owner}/{repo}/refresh', from: 'path', status: 202, response: queued },
  errors: ['invalid_api_key', 'forbidden', 'library_not_found', 'conflict', 'license_required'],
});

const host = z.string().trim().min(1).max(300).describe('git.example.com, or git.example.com:8443 for one port only');

/**
 * Whose credentials a change acts on (docs/git.md#whose-credentials). A key acts for its teamspace unless
 * it says `instance`, which only the default teamspace's owners and admins may (it administers the
 * instance); the CLI acts for the instance.
 */
const scope = z
  .enum(['teamspace', 'instance'])
  .optional()
  .describe(
    "teamspace: the caller's teamspace's (default for a key); instance: the instance's, used for the default teamspace's repositories (owners and admins of the default teamspace; the CLI's default)",
  );

export const gitHostView = z.object({
  host: z.string(),
  kind: z.enum(['token', 'basic', 'ssh']),
  username: z.string().nullable(),
  scope: z.enum(['teamspace', 'instance']).describe("the caller's teamspace's, or the instance's"),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const gitHostsListOperation = defineOperation({
  id: 'gitHostsList',
  summary: "Git hosts with credentials stored by the caller's teamspace (and, for the default teamspace, by the instance); never the secrets",
  input: z.object({}),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'get', path: '/api/git-hosts', from: 'query', status: 200, response: z.object({ hosts: z.array(gitHostView) }) },
  errors: ['invalid_api_key', 'forbidden'],
});

export const gitHostAddInput = z
  .object({
    host,
    kind: z
      .enum(['token', 'basic', 'ssh'])
      .describe('token: an access token (sent as the basic-auth password); basic: username and password; ssh: a private key'),
    username: z.string().trim().min(1).max(200).optional().describe('basic: required; token: default oauth2; ssh: default git'),
    secret: z
      .string()
      .min(1)
      .max(64 * 1024)
      .describe('the token, password or private key; stored encrypted, never shown again'),
    scope,
  })
  .strict();

export const gitHostAddOperation = defineOperation({
  id: 'gitHostAdd',
  summary: "Store (or replace) the teamspace's (or the instance's) credentials of a Git host, encrypted with STACKS_GIT_CREDENTIALS_KEY",
  input: gitHostAddInput,
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'post', path: '/api/git-hosts', from: 'body', status: 200, response: gitHostView },
  errors: ['invalid_api_key', 'forbidden'],
});

export const gitHostRemoveOperation = defineOperation({
  id: 'gitHostRemove',
  summary: "Forget the teamspace's (or the instance's) credentials of a Git host; another teamspace's are 404 like absent ones",
  input: z.object({ host, scope }).strict(),
  access: { caller: 'key', roles: ADMINS },
  http: { method: 'delete', path: '/api/git-hosts/{host}', from: 'path+query', status: 204, response: null },
  errors: ['invalid_api_key', 'forbidden', 'not_found'],
});
