import path from 'node:path';
import express, { type Express } from 'express';

/** server/web/public, from this file's place (server/http/routes/). */
const PUBLIC_DIR = path.resolve(import.meta.dirname, '../../web/public');

/** The small web UI at `/`: static files that call the same public API as every other client. */
export function mountWeb(app: Express): void {
  app.use('/', express.static(PUBLIC_DIR, { index: 'index.html', maxAge: '1h' }));
}
