#!/usr/bin/env node
// The `stacks` command. Where the TypeScript sources are absent (the offline package, the Docker
// image) the compiled JavaScript in dist/ runs; so it does with NODE_ENV=production beside a build.
// A checkout runs the sources through tsx: a stale dist/ is never picked up by accident.
import fs from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const sources = new URL('../cli/main.ts', import.meta.url);
if (fs.existsSync(compiled) && (!fs.existsSync(sources) || process.env.NODE_ENV === 'production')) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
}
