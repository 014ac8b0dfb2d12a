import path from 'node:path';
import express, { type Express } from 'express';
import type { Services } from '../../services.ts';
import { ROOT_DIR } from '../../services.ts';

/** The small web UI at `/`: static files that call the same public API as every other client. */
export function mountWeb(app: Express, _s: Services): void {
  app.use('/', express.static(path.join(ROOT_DIR, 'server/web/public'), { index: 'index.html', maxAge: '1h' }));
}
