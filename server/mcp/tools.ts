import { z } from 'zod';
import { parseLibraryId } from '../../lib/model.ts';
import type { LibrarySearchEntry } from '../search/answer-types.ts';
import type { DocsBackend } from './backend.ts';
import { CONTEXT_QUERY_MAX, SEARCH_QUERY_MAX, contextInput, libsSearchInput, searchInput } from '../contracts/search.ts';

/**
 * The MCP tools of Stacks: the two tools of the hosted service (`resolve-library-id`,
 * `query-docs`, same names, inputs and argument aliases, so agent prompts written for it keep
 * working) plus `search-docs` over /v3/search. Every tool is read-only and idempotent.
 */

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
}

interface ToolDef {
  name: string;
  title: string;
  description: string;
  schema: z.ZodObject;
  /** canonical argument -> names that agents (and the hosted tools) also use for it */
  aliases: Record<string, string[]>;
  run(backend: DocsBackend, args: Record<string, unknown>): Promise<string>;
}

const queryAliases = { query: ['userQuery', 'question'] };

// The inputs are the operations' contracts (the same limits as REST and the CLI), described for agents.
const resolveSchema = z.object({
  libraryName: libsSearchInput.shape.libraryName.describe(
    "The library or product name to look up, with its official spelling (e.g. 'Next.js', 'fastify', 'zod'), or an npm package its documentation installs (e.g. 'react-query' for TanStack Query).",
  ),
  query: libsSearchInput.shape.query.describe(
    'What the user is trying to do or asks (at most 500 characters); used to rank matching libraries by relevance. Do not include secrets.',
  ),
});

const queryDocsSchema = z.object({
  libraryId: contextInput.shape.libraryId.describe(
    "Exact library ID from resolve-library-id, or given by the user: '/owner/repo', optionally with a version as '/owner/repo/v1.2.3' or '/owner/repo@v1.2.3'.",
  ),
  query: contextInput.shape.query.describe(
    `The question for the documentation, about one concept, with relevant detail (e.g. 'How to register a plugin with options in fastify'), at most ${CONTEXT_QUERY_MAX} characters. Used to rank snippets.`,
  ),
});

const searchDocsSchema = z.object({
  query: searchInput.shape.query.describe(
    `The question, in natural language (at most ${SEARCH_QUERY_MAX} characters); may include pasted error output. Used to pick libraries (when none are given) and rank snippets.`,
  ),
  libraries: searchInput.shape.library.describe(
    "Up to 4 libraries to search: product names ('fastify') or exact library IDs ('/fastify/fastify', '/fastify/fastify@v4.29.1'). Omit to let Stacks pick from the question.",
  ),
  version: searchInput.shape.version.describe(
    "Version of the documentation wanted (e.g. '4.29.1', 'v3'). Stacks says in the answer when it could not serve that version.",
  ),
  language: searchInput.shape.language.describe("Preferred programming language of code examples (e.g. 'typescript'); a soft preference."),
});

/** Maps a numeric trust score (0-10) to the label agents are told to weigh. */
export function reputationLabel(trustScore: number | null | undefined): 'High' | 'Medium' | 'Low' | 'Unknown' {
  if (trustScore === null || trustScore === undefined || !Number.isFinite(trustScore) || trustScore < 0) return 'Unknown';
  if (trustScore >= 7) return 'High';
  if (trustScore >= 4) return 'Medium';
  return 'Low';
}

/** The text list resolve-library-id answers (the hosted tool's layout). */
export function formatLibraries(results: LibrarySearchEntry[], searchFilterApplied: boolean): string {
  if (results.length === 0)
    return 'No documentation libraries found matching your query. Try the official name or another spelling, or use search-docs without a library.';
  const parts: string[] = [];
  if (searchFilterApplied) parts.push("Note: these results only include libraries allowed by your teamspace's library filters.");
  parts.push(
    results
      .map((r) => {
        const lines = [`- Title: ${r.title}`, `- Library ID: ${r.id}`, `- Description: ${r.description || '(none)'}`];
        if (Number.isFinite(r.totalSnippets) && r.totalSnippets >= 0) lines.push(`- Code Snippets: ${r.totalSnippets}`);
        lines.push(`- Source Reputation: ${reputationLabel(r.trustScore)}`);
        if (r.benchmarkScore > 0) lines.push(`- Benchmark Score: ${r.benchmarkScore}`);
        if (r.versions?.length) lines.push(`- Versions: ${r.versions.join(', ')}`);
        if (r.source) lines.push(`- Source: ${r.source}`);
        return lines.join('\n');
      })
      .join('\n----------\n'),
  );
  return `Available Libraries:\n\n${parts.join('\n\n')}`;
}

/** What an X-Stacks-Search-Reason header means, said to the agent above the answer. */
const REASON_NOTES: Record<string, string> = {
  versionUnverified: 'the requested version is not indexed for at least one library; its current documentation is shown instead.',
  versionPrerelease: 'for at least one library only a prerelease matched the requested version; that prerelease is shown.',
  partialSearchFailure: 'part of the search failed; this answer may be incomplete.',
};

export const TOOLS: ToolDef[] = [
  {
    name: 'resolve-library-id',
    title: 'Resolve library ID',
    description: `Finds the Stacks library ID (format '/owner/repo') for a library, framework, SDK or product name, and lists the matching libraries indexed on this Stacks instance.

Call this FIRST whenever the user asks about a library, framework, API or tool and you need its documentation, UNLESS the user already gave a library ID like '/owner/repo' or '/owner/repo/version'; then call query-docs with it directly.

Each result shows: title, library ID, description, number of code snippets, source reputation (High, Medium, Low or Unknown), indexed versions (use '/owner/repo/<version>' with query-docs when the user names a version) and source.
Pick the result whose name matches best; prefer higher reputation and more snippets when names tie. Do not call this more than 3 times per question.`,
    schema: resolveSchema,
    aliases: queryAliases,
    async run(backend, args) {
      const a = args as z.infer<typeof resolveSchema>;
      try {
        const { results, searchFilterApplied } = await backend.resolveLibrary({ libraryName: a.libraryName, query: a.query });
        return formatLibraries(results, searchFilterApplied);
      } catch (err) {
        // No match is an answer for the agent, not a failure of the tool.
        if ((err as { code?: unknown })?.code === 'no_libraries_found') return formatLibraries([], false);
        throw err;
      }
    },
  },
  {
    name: 'query-docs',
    title: 'Query documentation',
    description: `Answers a question from the documentation and code examples of ONE library indexed on this Stacks instance, and returns the most relevant snippets as text with their source URLs.

Use it for API syntax, configuration, setup, version migration and library-specific errors, even for well-known libraries: the indexed documentation may be newer than what you remember.
You need an exact library ID: call resolve-library-id first unless the user gave one ('/owner/repo', '/owner/repo/version' or '/owner/repo@version').
Ask about one concept per call; do not call this more than 3 times per question. To search several libraries at once, or when you do not know which library is meant, use search-docs.`,
    schema: queryDocsSchema,
    aliases: { ...queryAliases, libraryId: ['context7CompatibleLibraryID', 'libraryID', 'libraryName'] },
    async run(backend, args) {
      const a = args as z.infer<typeof queryDocsSchema>;
      if (!parseLibraryId(a.libraryId)) {
        throw new ToolInputError(
          `libraryId "${a.libraryId}" is not a library ID. Use the form '/owner/repo' (optionally '/owner/repo/version'); call resolve-library-id to find it.`,
        );
      }
      return backend.queryDocs({ libraryId: a.libraryId, query: a.query });
    },
  },
  {
    name: 'search-docs',
    title: 'Search documentation',
    description: `Searches the documentation of up to 4 libraries indexed on this Stacks instance at once (or lets Stacks pick the libraries from the question), removes duplicates and returns one ranked answer as text, each snippet with its library ID and source URL.

Use it when a question spans several libraries, when you do not know the exact library ID, or when you paste an error message. Pass 'version' when the user works with a specific version; the answer says whether that version was served or current documentation was used instead.
For a single known library, query-docs gives the same quality with a narrower scope.
When no library is given and nothing indexed answers the question (it is about a language, framework or tool this instance has no documentation for), the result says "No documentation found" instead of returning unrelated snippets: answer from your own knowledge then, and say that the documentation did not cover it.`,
    schema: searchDocsSchema,
    aliases: { ...queryAliases, libraries: ['library'] },
    async run(backend, args) {
      const a = args as z.infer<typeof searchDocsSchema>;
      let r: Awaited<ReturnType<typeof backend.searchDocs>>;
      try {
        r = await backend.searchDocs({ query: a.query, libraries: a.libraries ?? [], version: a.version, language: a.language });
      } catch (err) {
        // "Nothing found" is an answer, not a failure: said plainly, so the assistant does not retry or invent sources.
        if ((err as { code?: unknown }).code === 'no_documentation_found') return `No documentation found. ${(err as Error).message}`;
        throw err;
      }
      const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]));
      const reason = headers['x-stacks-search-reason'];
      const note = reason ? `Note: ${REASON_NOTES[reason] ?? `partial answer (${reason}).`}\n\n` : '';
      return note + r.text;
    },
  },
];

/** A tool input problem found after schema validation. */
export class ToolInputError extends Error {
  readonly code = 'validation_error';
}

/** Renames alias arguments to their canonical names (only when the canonical one is absent). A single string for an array argument becomes a one-element array. */
export function applyAliases(def: ToolDef, raw: unknown): Record<string, unknown> {
  const args: Record<string, unknown> = raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>) } : {};
  for (const [canonical, alternatives] of Object.entries(def.aliases)) {
    if (args[canonical] !== undefined) continue;
    for (const alt of alternatives) {
      if (args[alt] !== undefined) {
        args[canonical] = args[alt];
        delete args[alt];
        break;
      }
    }
  }
  if (def.name === 'search-docs' && typeof args.libraries === 'string') args.libraries = [args.libraries];
  return args;
}

type ListedTool = {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  annotations: Record<string, unknown>;
};
// Built once: the HTTP endpoint creates a server per request.
let listed: ListedTool[] | undefined;

/** The tools/list entries: JSON Schemas of the canonical inputs plus the read-only annotations. */
export function listTools(): ListedTool[] {
  listed ??= TOOLS.map((t) => {
    const { $schema: _ignored, ...schema } = z.toJSONSchema(t.schema, { io: 'input' }) as Record<string, unknown>;
    return {
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: { ...schema, type: 'object' as const },
      annotations: { title: t.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    };
  });
  return listed;
}

function toolError(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Runs one tools/call: aliases, validation, the backend call; every failure becomes a tool error (isError), never a crash. */
export async function callTool(backend: DocsBackend, name: string, rawArgs: unknown, onUnexpected?: (err: unknown) => void): Promise<ToolResult> {
  const def = TOOLS.find((t) => t.name === name);
  if (!def) return toolError(`Unknown tool "${name}". Tools: ${TOOLS.map((t) => t.name).join(', ')}.`);
  const parsed = def.schema.safeParse(applyAliases(def, rawArgs));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : 'arguments';
    const message = issue.code === 'invalid_type' && issue.input === undefined ? `${where} is required.` : `${where}: ${issue.message}`;
    return toolError(`Invalid arguments for ${name}: ${message}`);
  }
  try {
    const text = await def.run(backend, parsed.data as Record<string, unknown>);
    return { content: [{ type: 'text', text }] };
  } catch (err) {
    const code = (err as { code?: unknown })?.code;
    if (typeof code !== 'string' || code === 'internal_error') onUnexpected?.(err);
    return toolError(describeFailure(err, name));
  }
}

function describeFailure(err: unknown, tool: string): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : 'internal_error';
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  const hint =
    tool === 'query-docs' && ['library_not_found', 'no_documentation_found', 'invalid_library_id', 'not_found'].includes(code)
      ? ' Call resolve-library-id to find a valid library ID.'
      : '';
  return `${message} (${code})${hint}`;
}
