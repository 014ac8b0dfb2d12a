import fs from 'node:fs';
import path from 'node:path';

/**
 * The installation's root: the nearest folder above this module that holds package.json. That is
 * the checkout when the TypeScript runs, and the unpacked package (or /app in the image) when the
 * compiled copy in dist/ runs, so assets beside the code (licenses/, docs/, data/, server/web/public)
 * are found the same way in both.
 */
export const APP_ROOT: string = findRoot(import.meta.dirname);

/** The Stacks version, from package.json (shown by /api/health and the MCP server info). */
export const VERSION: string = (JSON.parse(fs.readFileSync(path.join(APP_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`No package.json above ${from}: the installation is incomplete.`);
  }
}
