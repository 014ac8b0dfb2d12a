/** Domain types shared by the services. Field names of the public API live in server/http, not here. */

export type SourceType = 'repo' | 'website' | 'openapi' | 'llmstxt' | 'files' | 'confluence';

export type Role = 'owner' | 'admin' | 'member';
/** What a key may do: `all` that its member's role allows, or `read`: search, context and MCP only. */
export const KEY_SCOPES = ['all', 'read'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];
/**
 * Who may read a library besides the local operator: `teamspace` (its owner teamspace's keys and
 * users, plus teamspaces it is granted to) or `instance` (every key, and anonymous callers when
 * anonymous search is on).
 */
export const LIBRARY_VISIBILITIES = ['teamspace', 'instance'] as const;
export type LibraryVisibility = (typeof LIBRARY_VISIBILITIES)[number];

export interface CodeExample {
  language: string;
  code: string;
}

/** What every source (bundle, crawl, OpenAPI, llms.txt, PDF/DOCX) is normalized into. */
export interface CodeSnippetInput {
  kind: 'code';
  /** URL of the source location (codeId). */
  sourceId: string;
  title: string;
  description: string;
  language: string;
  pageTitle: string;
  breadcrumb?: string;
  codeList: CodeExample[];
  /** Token count; computed with the tokenizer when absent. */
  tokens?: number;
  isDynamic?: boolean;
  sourceFile?: string;
}

export interface InfoSnippetInput {
  kind: 'info';
  /** URL of the source page (pageId). */
  sourceId: string;
  content: string;
  breadcrumb?: string;
  pageTitle?: string;
  /** Optional short title, used for ranking only. */
  title?: string;
  tokens?: number;
  /** Repository-relative file the prose came from (git sources: a refresh reuses the snippets of unchanged files). */
  sourceFile?: string;
}

export type SnippetInput = CodeSnippetInput | InfoSnippetInput;

/** A stored snippet as the search layer reads it. */
export interface StoredSnippet {
  id: number;
  versionId: number;
  kind: 'code' | 'info';
  sourceId: string;
  title: string;
  description: string;
  language: string;
  pageTitle: string;
  breadcrumb: string;
  content: string;
  codeList: CodeExample[];
  tokens: number;
  contentHash: string;
  position: number;
  isDynamic: boolean;
  sourceFile: string | null;
}

export interface LibraryMeta {
  id: string;
  title: string;
  description: string;
  sourceType: SourceType;
  sourceUrl?: string | null;
  language?: string;
  branch?: string | null;
  docsRepoUrl?: string | null;
  docsSiteUrl?: string | null;
  trustScore?: number | null;
  verified?: boolean;
  stars?: number | null;
  license?: string | null;
  /** The owner teamspace; null on libraries written before teamspaces owned them (the default teamspace manages those). */
  teamspaceId?: number | null;
  /** Set when the library is created; an existing library keeps its own (changed only by an owner or admin). */
  visibility?: LibraryVisibility;
}

export interface Library extends Required<Omit<LibraryMeta, 'teamspaceId' | 'visibility'>> {
  teamspaceId: number | null;
  visibility: LibraryVisibility;
  /** Teamspaces besides the owner that may read a `teamspace` library. */
  grants: number[];
  createdAt: string;
  updatedAt: string;
}

export type VersionState = 'building' | 'ready' | 'failed' | 'retired';

export interface LibraryVersion {
  id: number;
  libraryId: string;
  /** '' is the library's current documentation. */
  tag: string;
  state: VersionState;
  isCurrent: boolean;
  verified: boolean;
  totalTokens: number;
  totalSnippets: number;
  jobId: number | null;
  createdAt: string;
  updatedAt: string;
  /** The repository's dynamic source-code index that belongs to this version (docs/git.md), or null. */
  dynamicVersionId: number | null;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** Whether a job has reached its final state. */
export function jobFinished(state: JobState): boolean {
  return state === 'succeeded' || state === 'failed' || state === 'cancelled';
}

export interface Job<P = Record<string, unknown>> {
  id: number;
  kind: string;
  state: JobState;
  libraryId: string | null;
  payload: P;
  progress: Record<string, unknown>;
  error: string | null;
  /** The code of the error a failed job ended with (an ApiError's `error`); null for other failures. */
  errorCode: string | null;
  attempts: number;
  cancelRequested: boolean;
  memberId: number | null;
  /** The teamspace the job belongs to; null: none (instance maintenance), shown to every teamspace. */
  teamspaceId: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
}

/** Who is calling: resolved from an API key, or anonymous. */
export interface Principal {
  /** The API key; 0 for a signed-in user's session. */
  keyId: number;
  /** Set when a signed-in user (web console session) acts, not a key. */
  userId?: number;
  memberId: number;
  memberName: string;
  teamspaceId: number;
  role: Role;
  scope: KeyScope;
}

/**
 * The instance's own documentation (README and docs/), indexed at start as an instance-wide
 * library. It answers when asked by name (library=stacks, this ID), never by a library-less search.
 */
export const OWN_DOCS_ID = '/stacks/stacks';

/** The CLI working on the server's own files: it reads every library, whatever its visibility. */
export const OPERATOR = Object.freeze({ operator: true as const });

/** Whom a read is for: a key's principal, null for an anonymous caller, or the local OPERATOR. */
export type Reader = Principal | null | typeof OPERATOR;

/** The principal behind a read (null for anonymous callers and the operator, who have no member). */
export function principalOf(reader: Reader): Principal | null {
  return reader && !('operator' in reader) ? reader : null;
}

/** Parses `/owner/repo`, `/owner/repo/tag` and `/owner/repo@tag`. Returns null when malformed. */
export function parseLibraryId(raw: string): { id: string; tag: string | null } | null {
  const m = /^\/([^/@\s]+)\/([^/@\s]+)(?:[/@]([^/@\s]+))?\/?$/.exec(raw.trim());
  if (!m) return null;
  return { id: `/${m[1]}/${m[2]}`, tag: m[3] ?? null };
}
