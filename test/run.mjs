// Runs every test/**/*.test.ts with node's test runner through a TypeScript loader (Node 20's runner does not glob .ts files itself).
//   node test/run.mjs [part-of-a-path ...]     e.g. `node test/run.mjs crawl-spa` runs test/crawl-spa.test.ts
//
// The run always ends, whatever a test leaves behind:
//   - --test-force-exit (Node >= 20.14): a test file's process exits when its tests are done, even if
//     a server, socket or timer was left open;
//   - --test-timeout: a test file still running after TEST_FILE_TIMEOUT_MS (default 10 min)
//     is stopped (SIGTERM; test/helpers/lifecycle.ts then kills what it started) and fails;
//   - the runner gets its own process group: a process a test started and never stopped is
//     killed when the run ends (and named, so it can be fixed), and after
//     TEST_RUN_TIMEOUT_MS (default 30 min) the whole run is stopped and fails.
//   (The variables are not STACKS_*: the server refuses unknown STACKS_ variables, and the
//   processes tests start inherit the environment.)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { longestFirst, testFiles } from './test-files.mjs';

const only = process.argv.slice(2);
const files = testFiles();
const selected = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const ms = (name, fallback) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const FILE_TIMEOUT_MS = ms('TEST_FILE_TIMEOUT_MS', 10 * 60_000);
const RUN_TIMEOUT_MS = ms('TEST_RUN_TIMEOUT_MS', 30 * 60_000);
const [major, minor] = process.versions.node.split('.').map(Number);
const forceExit = major > 20 || (major === 20 && minor >= 14) ? ['--test-force-exit'] : [];

// Test files run at once (TEST_CONCURRENCY, default 2): per Node.js version when test/run-versions.mjs runs two.
const CONCURRENCY = ms('TEST_CONCURRENCY', 2);
// The TypeScript loader: test/ts-loader/register.mjs (a third to a half less CPU per file than tsx,
// which it replaces), or tsx with TEST_TS_LOADER=tsx.
const loader = process.env.TEST_TS_LOADER === 'tsx' ? 'tsx' : path.join(import.meta.dirname, 'ts-loader/register.mjs');
const args = [
  '--import',
  loader,
  '--test',
  ...forceExit,
  `--test-timeout=${FILE_TIMEOUT_MS}`,
  `--test-concurrency=${CONCURRENCY}`,
  '--test-reporter=spec',
  ...(process.env.TEST_DURATIONS
    ? [
        '--test-reporter-destination=stdout',
        `--test-reporter=${path.join(import.meta.dirname, 'durations-reporter.mjs')}`,
        '--test-reporter-destination=stdout',
      ]
    : []),
  // The longest first: a long file started last would make the run end late.
  ...longestFirst(selected),
];
// detached: the runner leads a new process group, which every test file and every process they
// spawn join (Chromium excepted: playwright puts it in a group of its own and kills it itself).
const runner = spawn(process.execPath, args, { stdio: 'inherit', detached: true });
const group = runner.pid;

/** Sends a signal to every process of the run's group; false if none is left. */
function signalGroup(signal) {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The live processes still in the run's group, as "pid command" lines; null where /proc is missing.
 * Zombies are left out: an exited child (tsx's esbuild, say) waits there to be reaped by init.
 */
function groupMembers() {
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const out = [];
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) !== group || state === 'Z') continue;
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      out.push(`${pid} ${cmd.length > 160 ? `${cmd.slice(0, 160)}...` : cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

let timedOut = false;
const runTimer = setTimeout(() => {
  timedOut = true;
  console.error(`\n[test/run.mjs] the test run is still going after ${Math.round(RUN_TIMEOUT_MS / 60_000)} min (TEST_RUN_TIMEOUT_MS): stopping it`);
  signalGroup('SIGTERM');
  setTimeout(() => signalGroup('SIGKILL'), 10_000).unref();
}, RUN_TIMEOUT_MS);

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    signalGroup(signal);
    setTimeout(() => signalGroup('SIGKILL'), 5_000).unref();
  });
}

runner.on('exit', async (code, signal) => {
  clearTimeout(runTimer);
  // A test file stopped by --test-timeout may still be running its exit handlers: wait a moment.
  // Whatever is alive in the group after that was started by a test and never stopped.
  let left = groupMembers() ?? (signalGroup(0) ? ['(pids unknown)'] : []);
  for (let waited = 0; left.length && waited < 3_000; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    left = groupMembers() ?? (signalGroup(0) ? ['(pids unknown)'] : []);
  }
  signalGroup('SIGKILL');
  if (left.length) console.error(`[test/run.mjs] killed ${left.length} process(es) a test left running:${left.map((l) => `\n  ${l}`).join('')}`);
  process.exit(timedOut ? 1 : (code ?? (signal ? 1 : 0)));
});
