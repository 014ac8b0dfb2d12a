// `npm test`: the type check, the lint and the compile of the program the suite's commands run
// (test/run-versions.mjs, TEST_CLI_BUILD) start at the same time, since each is mostly one core's
// work (on 2 cores about 15 s together instead of 26 one after another); each one's output is shown
// whole, with its name, when it ends. Then, only if all three passed, the suite. The exit status
// fails if any of them failed.
//   npm test [-- part-of-a-path ...]     (the filter of test/run-versions.mjs)
import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
// In the checkout's own .tmp/ (git ignores it), not in node_modules: worktrees that share one
// node_modules through a link would build over each other's copy.
const cliBuild = path.join(root, '.tmp/test-build');
const steps = [
  { name: 'typecheck', cmd: [...npm, 'run', '--silent', 'typecheck'] },
  { name: 'lint', cmd: [...npm, 'run', '--silent', 'lint'] },
  { name: 'build for the suite', cmd: [process.execPath, path.join(root, 'scripts/build.mjs'), '--out', cliBuild, '--no-check'] },
];

const children = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => (children.forEach((c) => c.kill(signal)), process.exit(1)));

/** Runs a command to its end with its output (stdout and stderr interleaved) kept; resolves to its exit code. */
function run(step, { stream = false, env = process.env } = {}) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(step.cmd[0], step.cmd.slice(1), { cwd: root, env, stdio: ['ignore', stream ? 'inherit' : 'pipe', stream ? 'inherit' : 'pipe'] });
    children.add(child);
    let out = '';
    if (!stream) for (const s of [child.stdout, child.stderr]) s.on('data', (d) => (out += d));
    child.on('error', (err) => (out += `${err.message}\n`));
    child.on('close', (code, signal) => {
      children.delete(child);
      const status = code === 0 ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`;
      if (!stream)
        process.stdout.write(`[npm test] ${step.name} ${status} in ${((Date.now() - t0) / 1000).toFixed(0)} s${out.trim() ? `:\n${out.trimEnd()}` : ''}\n`);
      resolve(code ?? 1);
    });
  });
}

const codes = await Promise.all(steps.map((s) => run(s)));
if (codes.some((c) => c !== 0)) {
  console.error(
    `[npm test] not running the suite: ${steps
      .filter((_, i) => codes[i] !== 0)
      .map((s) => s.name)
      .join(', ')} failed`,
  );
  process.exit(1);
}
const suite = { name: 'suite', cmd: [process.execPath, path.join(root, 'test/run-versions.mjs'), ...process.argv.slice(2)] };
// TEST_LINT_PASSED: the suite's test of the import rules (test/lint-layers.test.ts) is the lint's own check.
process.exit(await run(suite, { stream: true, env: { ...process.env, TEST_CLI_BUILD: cliBuild, TEST_LINT_PASSED: '1' } }));
