import type { CodeExample, Library, Reader } from '../../lib/model.ts';

/**
 * The public response shapes of the spec and the service interfaces behind /api/v2/context,
 * /api/v3/search and /api/v2/libs/search. HTTP routes, MCP tools and the CLI all call these
 * services; each service returns JSON and text built from the same result.
 */

export interface CodeSnippetJson {
  codeTitle: string;
  codeDescription: string;
  codeLanguage: string;
  codeTokens: number;
  codeId: string;
  pageTitle: string;
  codeList: CodeExample[];
  isDynamic?: boolean;
  sourceFile?: string;
}

export interface InfoSnippetJson {
  content: string;
  contentTokens: number;
  pageId?: string;
  breadcrumb?: string;
}

export interface ContextRules {
  global: string[];
  libraryOwn: string[];
  libraryTeam: string[];
}

export interface ContextResponse {
  codeSnippets: CodeSnippetJson[];
  infoSnippets: InfoSnippetJson[];
  rules?: ContextRules;
}

export type VersionStatus = 'verified' | 'prerelease' | 'unverified';

export interface SearchContextResponse {
  codeSnippets: (CodeSnippetJson & { libraryId: string })[];
  infoSnippets: (InfoSnippetJson & { libraryId: string })[];
  rules?: { global: string[]; libraries: { libraryId: string; libraryOwn: string[]; libraryTeam: string[] }[] };
  version?: {
    requested?: string;
    status: VersionStatus;
    libraries: { libraryId: string; requested: string; served: string | null; status: VersionStatus }[];
  };
}

/** Both renderings of one answer plus the X-Stacks-Search-* headers that go with it. */
export interface Rendered<J> {
  json: J;
  text: string;
  headers: Record<string, string>;
}

export interface ContextRequest {
  libraryId: string;
  query: string;
  fast: boolean;
  researchMode: boolean;
}

export interface ContextService {
  query(req: ContextRequest, principal: Reader): Promise<Rendered<ContextResponse>>;
}

export interface SearchRequest {
  query: string;
  libraries: string[];
  version?: string;
  language?: string;
}

export interface SearchService {
  search(req: SearchRequest, principal: Reader): Promise<Rendered<SearchContextResponse>>;
}

export interface LibrarySearchEntry {
  id: string;
  title: string;
  description: string;
  branch: string;
  lastUpdateDate: string;
  state: string;
  totalTokens: number;
  totalSnippets: number;
  stars: number;
  trustScore: number;
  benchmarkScore: number;
  versions: string[];
  source: string;
}

export interface LibrarySearchService {
  search(req: { libraryName: string; query: string }, principal: Reader): Promise<{ results: LibrarySearchEntry[]; searchFilterApplied: boolean }>;
  /** Every library the caller may see, by ID (GET /api/libraries, the web UI). */
  list(principal: Reader): Promise<LibrarySearchEntry[]>;
}

/**
 * Teamspace access: which libraries a caller may see, and the rules that go with an answer.
 * The teamspaces feature supplies the real policy; the default allows every library and has no rules.
 */
export interface AccessPolicy {
  /** True when the caller may be served this library. */
  canSee(principal: Reader, library: Library): boolean;
  /** True when a filter narrowed what this caller can see (searchFilterApplied). */
  filtersActive(principal: Reader): boolean;
  rules(principal: Reader, libraryIds: string[]): { global: string[]; libraries: { libraryId: string; libraryOwn: string[]; libraryTeam: string[] }[] };
}
