// Runs every test/**/*.test.ts with node's test runner through tsx (Node 20's runner does not glob .ts files itself).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname);
const only = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== 'fixtures' && e.name !== 'node_modules') walk(p);
    else if (e.isFile() && e.name.endsWith('.test.ts')) files.push(p);
  }
})(root);
const selected = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...selected.sort()], { stdio: 'inherit' });
process.exit(r.status ?? 1);
