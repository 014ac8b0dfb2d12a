// The production build: TypeScript compiled to JavaScript in dist/ (tsc -p tsconfig.build.json,
// relative `.ts` imports rewritten to `.js`), plus the files the compiled modules read beside
// themselves. bin/stacks.js runs dist/ where the TypeScript sources are absent (the offline package,
// the Docker image) or NODE_ENV=production; a checkout keeps running the sources through tsx.
//   node scripts/build.mjs [--out DIR] [--no-check]
//     --out DIR    DIR (default dist/) must be inside the checkout: the compiled code finds
//                  package.json and node_modules above itself.
//     --no-check   emit without type-checking (tsc --noCheck: the same output, ~3 CPU-s less), for
//                  `npm test`, which type-checks beside it.
// test/run-versions.mjs builds a copy with --out for the commands the test suite runs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const root = path.resolve(import.meta.dirname, '..');
const outAt = process.argv.indexOf('--out');
const dist = path.resolve(root, outAt >= 0 ? (process.argv[outAt + 1] ?? '') : 'dist');
if (dist === root || !dist.startsWith(root + path.sep)) throw new Error(`build: --out must be a folder inside ${root}`);
fs.rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const noCheck = process.argv.includes('--no-check') ? ['--noCheck'] : [];
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', dist, ...noCheck], { stdio: 'inherit', cwd: root });
// Read by path relative to the compiled module (new URL('./x', import.meta.url)).
for (const asset of ['lib/vector/int8-l2.wasm', 'server/embed/model-pin.json']) fs.copyFileSync(path.join(root, asset), path.join(dist, asset));
const files = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) (e.isDirectory() ? walk : (p) => files.push(p))(path.join(dir, e.name));
})(dist);
console.log(`build: ${files.length} files in ${path.relative(root, dist)}/`);
