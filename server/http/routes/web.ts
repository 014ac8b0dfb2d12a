import path from 'node:path';
import { createRequire } from 'node:module';
import express, { type Express } from 'express';

/** server/web/public, from this file's place (server/http/routes/). */
const PUBLIC_DIR = path.resolve(import.meta.dirname, '../../web/public');

const resolve = createRequire(import.meta.url).resolve;
/**
 * The browser builds of the markdown renderer and the sanitizer the page uses, served from the
 * installed packages (no CDN: the appliance has no network, and the CSP allows scripts from itself only).
 */
const VENDOR: Record<string, string> = {
  'marked.js': path.join(path.dirname(resolve('marked')), 'marked.umd.js'),
  'purify.js': path.join(path.dirname(resolve('dompurify')), 'purify.min.js'),
};

/** The small web UI at `/`: static files that call the same public API as every other client. */
export function mountWeb(app: Express): void {
  for (const [name, file] of Object.entries(VENDOR)) {
    app.get(`/vendor/${name}`, (_req, res) => res.type('text/javascript').sendFile(file, { maxAge: '1h' }));
  }
  app.use('/', express.static(PUBLIC_DIR, { index: 'index.html', maxAge: '1h' }));
}
