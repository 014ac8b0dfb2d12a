import { after, before } from 'node:test';
import type { SearchContextResponse } from '../../server/search/answer-types.ts';
import type { SnippetInput } from '../../lib/model.ts';
import { startTestServer, type TestServer, type TestServerOptions } from './server.ts';
import { loadSearchCorpus } from './search-corpus.ts';

/**
 * Shared setup of the test/search-*.test.ts files: a real server with the corpora (fastify current +
 * v4.29.1 + v3.29.5, vite, hono, pino, zod) plus small libraries built here: /acme/widget (tags 1.4.0
 * and 2.0.0-beta.1, for prerelease rules), /acme/site (a website), /acme/sprocket (branch 3.x) and
 * /acme/zähler (a non-ASCII ID). Every file gets the same libraries so library selection behaves alike.
 */

function code(id: string, title: string, text: string): SnippetInput {
  return {
    kind: 'code',
    sourceId: id,
    title,
    description: `${title}: ${text}`,
    language: 'js',
    pageTitle: 'widgets',
    codeList: [{ language: 'js', code: `widget.${title.replace(/\W/g, '')}() // ${text}` }],
  };
}

async function addLibrary(
  s: TestServer,
  meta: { id: string; title: string; sourceType: 'repo' | 'website'; branch?: string },
  tag: string,
  marker: string,
): Promise<void> {
  const build = await s.services.writer.begin({ ...meta, description: `${meta.title} test library` }, { tag });
  await build.add([
    code(`https://example.com${meta.id}/${tag || 'main'}#spin`, 'spin the widget', `spins the widget gear ${marker}`),
    code(`https://example.com${meta.id}/${tag || 'main'}#stop`, 'stop the widget', `stops the widget gear ${marker}`),
    {
      kind: 'info',
      sourceId: `https://example.com${meta.id}/${tag || 'main'}#intro`,
      content: `The widget gear turns when spun. Release ${marker}.`,
      breadcrumb: 'Widgets > Intro',
    },
  ]);
  await build.commit();
}

export async function startSearchServer(options: TestServerOptions = {}): Promise<TestServer> {
  const s = await startTestServer(options);
  try {
    await loadSearchCorpus(s.services);
    await addLibrary(s, { id: '/acme/widget', title: 'Widget', sourceType: 'repo' }, '', 'current');
    await addLibrary(s, { id: '/acme/widget', title: 'Widget', sourceType: 'repo' }, '1.4.0', 'one-four');
    await addLibrary(s, { id: '/acme/widget', title: 'Widget', sourceType: 'repo' }, '2.0.0-beta.1', 'two-beta');
    await addLibrary(s, { id: '/acme/site', title: 'Gizmo Site', sourceType: 'website' }, '', 'site');
    await addLibrary(s, { id: '/acme/sprocket', title: 'Sprocket', sourceType: 'repo', branch: '3.x' }, '', 'three');
    await addLibrary(s, { id: '/acme/zähler', title: 'Zähler', sourceType: 'repo' }, '', 'umlaut');
  } catch (err) {
    await s.close();
    throw err;
  }
  return s;
}

/**
 * One test file's server: started before its tests (and handed to `onStart`), closed after them.
 * `search` and `get` talk to it.
 */
export function searchSuite(
  onStart: (s: TestServer) => void = () => {},
  options: TestServerOptions = {},
): {
  search: (params: Record<string, string | string[]>) => Promise<{ res: Response; body: SearchContextResponse }>;
  get: (path: string, auth?: string | null) => Promise<Response>;
} {
  let server: TestServer | null = null;
  before(async () => {
    server = await startSearchServer(options);
    onStart(server);
  });
  after(async () => {
    await server?.close();
  });
  const current = (): TestServer => {
    if (!server) throw new Error('the search test server is not started');
    return server;
  };
  return { search: (params) => searchJson(current(), params), get: (path, auth = null) => current().api(path, { auth }) };
}

/** GET /api/v3/search with repeated parameters for arrays; type=json unless given. */
export async function searchJson(s: TestServer, params: Record<string, string | string[]>): Promise<{ res: Response; body: SearchContextResponse }> {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of Array.isArray(v) ? v : [v]) u.append(k, x);
  if (!u.has('type')) u.set('type', 'json');
  const res = await s.api(`/api/v3/search?${u}`, { auth: null });
  const body = (await res.json()) as SearchContextResponse;
  return { res, body };
}

export function libsOf(body: SearchContextResponse): Set<string> {
  return new Set([...body.codeSnippets, ...body.infoSnippets].map((x) => x.libraryId));
}

export function hdr(res: Response): { status: string | null; reason: string | null; version: string | null } {
  return {
    status: res.headers.get('x-stacks-search-status'),
    reason: res.headers.get('x-stacks-search-reason'),
    version: res.headers.get('x-stacks-search-version'),
  };
}
