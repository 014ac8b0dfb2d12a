// Where the test data lives (test/fixtures, see its README), and a dependency-free static file
// server for it (a typed port of the serve.mjs that came with the fixtures).
//
//   node --import tsx test/helpers/fixtures.ts [--port 4173] [--quiet]
//
// Mounts (always bound to 127.0.0.1 only):
//   /static/  -> sites/static-docs   (missing page: 404 status with the site's 404.html)
//   /spa/     -> sites/spa-docs      (SPA fallback: extension-less unknown paths get index.html, 200)
//   /files/   -> openapi/, llmstxt/, documents/, bundles/  (e.g. /files/openapi/uspto.openapi.yaml)
//   /robots.txt and /sitemap.xml -> the static-docs copies
// In robots.txt and sitemap.xml the origin "http://127.0.0.1:4173" is rewritten to the origin the
// request came to, so the absolute URLs stay right on any port.
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { trackOpen } from './lifecycle.ts';

/** The fixture data: sites, OpenAPI specs, llms.txt files, documents, bundles, expected.json, corpus/. */
export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
/** The documentation corpus as import bundles (<name>.json), the same files the evaluation reads. */
export const CORPUS_BUNDLES = path.join(FIXTURES, 'corpus/bundles');

const DEFAULT_ORIGIN = 'http://127.0.0.1:4173';
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.yml': 'application/yaml; charset=utf-8',
  '.pdf': 'application/pdf',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};
const HTML = TYPES['.html']!;
const TEXT = TYPES['.txt']!;

interface Mount {
  prefix: string;
  dir: string;
  notFound?: string;
  rewriteOrigin?: boolean;
  spaFallback?: string;
  listing?: boolean;
}

const MOUNTS: Mount[] = [
  { prefix: '/static/', dir: 'sites/static-docs', notFound: '404.html', rewriteOrigin: true },
  { prefix: '/spa/', dir: 'sites/spa-docs', spaFallback: 'index.html' },
  { prefix: '/files/openapi/', dir: 'openapi', listing: true },
  { prefix: '/files/llmstxt/', dir: 'llmstxt', listing: true },
  { prefix: '/files/documents/', dir: 'documents', listing: true },
  { prefix: '/files/bundles/', dir: 'bundles', listing: true },
];
const ALIASES: Record<string, string> = { '/robots.txt': '/static/robots.txt', '/sitemap.xml': '/static/sitemap.xml' };

type Answer =
  | { status: number; location: string }
  /** `originText`: text whose default origin is replaced by the request's before sending. */
  | { status: number; type: string; body: string | Buffer; originText?: boolean };

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

async function statOrNull(p: string): Promise<import('node:fs').Stats | null> {
  try {
    return await fs.stat(p);
  } catch {
    return null;
  }
}

function page(title: string, items: [string, string][]): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>` +
    `<body><h1>${esc(title)}</h1><ul>${items.map(([href, label]) => `<li><a href="${esc(href)}">${esc(label)}</a></li>`).join('')}</ul></body></html>`
  );
}

async function resolve(pathname: string): Promise<Answer> {
  pathname = ALIASES[pathname] ?? pathname;
  if (pathname === '/') {
    return {
      status: 200,
      type: HTML,
      body: page('Fixture server', [
        ['/static/', 'static-docs (/static/)'],
        ['/spa/', 'spa-docs (/spa/)'],
        ['/files/', 'files (/files/)'],
      ]),
    };
  }
  if (pathname === '/files/') {
    return {
      status: 200,
      type: HTML,
      body: page(
        '/files/',
        MOUNTS.filter((m) => m.listing).map((m) => [m.prefix, m.prefix]),
      ),
    };
  }
  const bare = MOUNTS.find((m) => m.prefix === pathname + '/');
  if (bare) return { status: 301, location: bare.prefix };
  const mount = MOUNTS.find((m) => pathname.startsWith(m.prefix));
  if (!mount) return { status: 404, type: TEXT, body: 'Not found\n' };
  const root = path.join(FIXTURES, mount.dir);
  const rel = pathname.slice(mount.prefix.length);
  let file = path.normalize(path.join(root, rel));
  if (file !== root && !file.startsWith(root + path.sep)) return { status: 403, type: TEXT, body: 'Forbidden\n' };
  let st = await statOrNull(file);
  if (st?.isDirectory()) {
    if (!pathname.endsWith('/')) return { status: 301, location: pathname + '/' };
    const index = path.join(file, 'index.html');
    const indexStat = await statOrNull(index);
    if (indexStat) {
      file = index;
      st = indexStat;
    } else if (mount.listing && file === path.normalize(root)) {
      const names = (await fs.readdir(file)).sort();
      return {
        status: 200,
        type: HTML,
        body: page(
          pathname,
          names.map((n) => [pathname + encodeURIComponent(n), n]),
        ),
      };
    } else st = null;
  }
  if (st?.isFile()) {
    const ext = path.extname(file).toLowerCase();
    const body = await fs.readFile(file);
    const type = TYPES[ext] ?? 'application/octet-stream';
    if (mount.rewriteOrigin && (ext === '.xml' || ext === '.txt')) return { status: 200, type, body: body.toString('utf8'), originText: true };
    return { status: 200, type, body };
  }
  if (mount.spaFallback && !path.extname(rel)) return { status: 200, type: HTML, body: await fs.readFile(path.join(root, mount.spaFallback)) };
  if (mount.notFound) return { status: 404, type: HTML, body: await fs.readFile(path.join(root, mount.notFound)) };
  return { status: 404, type: TEXT, body: 'Not found\n' };
}

/** The bare server (not listening): GET and HEAD only, one log line per request unless quiet. */
export function createFixtureServer({ quiet = false }: { quiet?: boolean } = {}): http.Server {
  return http.createServer(async (req, res) => {
    const started = Date.now();
    let status = 500;
    let size = 0;
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        status = 405;
        res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': TEXT });
        res.end('Method not allowed\n');
        return;
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      let pathname: string | null;
      try {
        pathname = decodeURIComponent(url.pathname);
      } catch {
        pathname = null;
      }
      const r: Answer = pathname === null ? { status: 400, type: TEXT, body: 'Bad request\n' } : await resolve(pathname);
      status = r.status;
      if ('location' in r) {
        res.writeHead(r.status, { Location: r.location + url.search, 'Content-Length': 0 });
        res.end();
        return;
      }
      let body = r.body;
      if (r.originText && typeof body === 'string') body = body.split(DEFAULT_ORIGIN).join(`http://${req.headers.host ?? '127.0.0.1'}`);
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      size = bytes.length;
      res.writeHead(r.status, { 'Content-Type': r.type, 'Content-Length': size, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : bytes);
    } catch (err) {
      status = 500;
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': TEXT });
      res.end('Internal error\n');
      if (!quiet) console.error(err);
    } finally {
      if (!quiet) console.log(`${new Date().toISOString()} ${req.method} ${req.url} -> ${status} ${size}B ${Date.now() - started}ms`);
    }
  });
}

export interface FixtureServer {
  server: http.Server;
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** Stops listening and drops open connections; safe to call twice. */
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (`port: 0`, the default here, picks a free port). Close it in `after`/`t.after`/`finally`. */
export async function startFixtureServer({ port = 0, quiet = true }: { port?: number; quiet?: boolean } = {}): Promise<FixtureServer> {
  return listen(createFixtureServer({ quiet }), port);
}

/**
 * Listens with any server on 127.0.0.1 and returns the same close-once handle as the fixture server.
 * Close it in `t.after`/`after`/`finally`; one left open is closed after the file's tests.
 */
export async function listen(server: http.Server, port = 0): Promise<FixtureServer> {
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
  let closing: Promise<void> | null = null;
  return trackOpen({
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      (closing ??= new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      })),
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--port');
  const eq = args.find((a) => a.startsWith('--port='));
  const port = eq ? Number(eq.slice(7)) : i >= 0 ? Number(args[i + 1]) : 4173;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('usage: node --import tsx test/helpers/fixtures.ts [--port N] [--quiet]');
    process.exit(2);
  }
  const quiet = args.includes('--quiet');
  const server = createFixtureServer({ quiet });
  server.listen(port, '127.0.0.1', () => {
    console.log(`fixture server listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/ (static: /static/, spa: /spa/, files: /files/)`);
  });
}
