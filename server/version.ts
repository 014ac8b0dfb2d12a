import fs from 'node:fs';

/** The Stacks version, from package.json (shown by /api/health and the MCP server info). */
export const VERSION: string = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
