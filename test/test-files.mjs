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

const table = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'durations.json'), 'utf8')).seconds;

/** The measured seconds of a test file (its path, absolute or under test/), from test/durations.json; undefined if unmeasured. */
export function fileSeconds(file) {
  return table[
    path
      .relative(import.meta.dirname, path.resolve(import.meta.dirname, '..', file))
      .split(path.sep)
      .join('/')
  ];
}

/** Files in the order they should start: the longest measured first, so that no long file starts last; unmeasured (new) ones first of all. */
export function longestFirst(files) {
  const s = (f) => fileSeconds(f) ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => s(b) - s(a) || (a < b ? -1 : 1));
}
