// `npm run bench -- <name> [args...]` runs bench/<name>.ts (each benchmark prints its own figures).
import fs from 'node:fs';
import path from 'node:path';

const [name, ...rest] = process.argv.slice(2);
const dir = import.meta.dirname;
const available = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3));
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <name>   (available: ${available.join(', ') || 'none'})`);
  process.exit(2);
}
process.argv = [process.argv[0]!, path.join(dir, `${name}.ts`), ...rest];
await import(path.join(dir, `${name}.ts`));
