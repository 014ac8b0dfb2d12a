import path from 'node:path';
import { createRequire } from 'node:module';
import express, { type Express } from 'express';
import { APP_ROOT } from '../../version.ts';

/** The installation's documentation (which the built-in library /stacks/stacks links to) and the console's static files. */
const ROOT_DIR = APP_ROOT;
const PUBLIC_DIR = path.join(APP_ROOT, 'server/web/public');

const resolve = createRequire(import.meta.url).resolve;
/**
 * The browser builds of the markdown renderer and the sanitizer the page uses, served from the
 * installed packages (no CDN: the appliance has no network, and the CSP allows scripts from itself only).
 */
const VENDOR: Record<string, [pkg: string, file: string]> = {
  'marked.js': ['marked', 'marked.umd.js'],
  'purify.js': ['dompurify', 'purify.min.js'],
  // The usage charts of the Admin page (Chart.js, MIT).
  'chart.js': ['chart.js', 'chart.umd.min.js'],
};

/** The browser build's path, or null when the package is not installed (its page then does without it rather than the server failing to start). */
function vendorFile(pkg: string, file: string): string | null {
  try {
    return path.join(path.dirname(resolve(pkg)), file);
  } catch {
    return null;
  }
}

/** The web console at `/`: static files that call the same public API as every other client; and this installation's documentation at `/README.md` and `/docs/`. */
export function mountWeb(app: Express): void {
  for (const [name, [pkg, base]] of Object.entries(VENDOR)) {
    const file = vendorFile(pkg, base);
    if (file) app.get(`/vendor/${name}`, (_req, res) => res.type('text/javascript').sendFile(file, { maxAge: '1h' }));
  }
  app.get('/README.md', (_req, res) => res.type('text/markdown').sendFile(path.join(ROOT_DIR, 'README.md')));
  app.use('/docs', express.static(path.join(ROOT_DIR, 'docs'), { maxAge: '1h', setHeaders: (res, file) => file.endsWith('.md') && res.type('text/markdown') }));
  app.use('/', express.static(PUBLIC_DIR, { index: 'index.html', maxAge: '1h' }));
}
