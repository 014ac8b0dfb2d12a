// The production build: TypeScript compiled to JavaScript in dist/ (tsc -p tsconfig.build.json,
// relative `.ts` imports rewritten to `.js`), plus the files the compiled modules read beside
// themselves. bin/stacks.js runs dist/ where the TypeScript sources are absent (the offline package,
// the Docker image) or NODE_ENV=production; a checkout keeps running the sources through tsx.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
// Read by path relative to the compiled module (new URL('./x', import.meta.url)).
for (const asset of ['lib/vector/int8-l2.wasm']) fs.copyFileSync(path.join(root, asset), path.join(dist, asset));
const files = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) (e.isDirectory() ? walk : (p) => files.push(p))(path.join(dir, e.name));
})(dist);
console.log(`build: ${files.length} files in dist/`);
