// The suite's test files, for test/run.mjs and test/run-versions.mjs: every test/**/*.test.ts
// outside fixtures and node_modules, sorted.
import fs from 'node:fs';
import path from 'node:path';

export function testFiles() {
  const out = [];
  (function walk(dir) {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && e.name !== 'fixtures' && e.name !== 'node_modules') walk(p);
      else if (e.isFile() && e.name.endsWith('.test.ts')) out.push(p);
    }
  })(import.meta.dirname);
  return out.sort();
}
