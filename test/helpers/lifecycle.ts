// The safety net behind the tests' own t.after/after/finally: what a test starts ends with the test
// process, even when the test failed before its cleanup ran.
//   - child processes started through trackChild() (every spawnStacks/startStacksProcess/runStacks)
//     are killed when the process exits, also on SIGTERM/SIGINT/SIGHUP (node's test runner sends
//     SIGTERM to a test file that ran past --test-timeout);
//   - closeables registered with trackOpen() (every startTestServer, startFixtureServer and listen)
//     still open when the file's tests are done are closed by a file-level `after` hook, so the file's process can end;
//   - temporary directories registered with trackTempDir() (every tempDir(): data dirs, archives,
//     exports) are removed when the process exits, after the children are killed (every run used to
//     leave all of them in the system's temp dir). KEEP_TEST_DIRS=1 keeps them to look into.
// Chromium needs nothing here: playwright kills the browsers it launched when the process exits.
import fs from 'node:fs';
import { after } from 'node:test';
import type { ChildProcess } from 'node:child_process';

interface Closeable {
  close(): Promise<void>;
}

const children = new Set<ChildProcess>();
const open = new Set<Closeable>();
/** Set by node's test runner in every test file's process (not in benchmarks that import helpers). */
const underTestRunner = Boolean(process.env.NODE_TEST_CONTEXT);

function killChildren(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  children.clear();
}

const tempDirs = new Set<string>();

function removeTempDirs(): void {
  if (process.env.KEEP_TEST_DIRS === '1') return;
  for (const dir of tempDirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch {
      // Cleaning up must never fail the tests; a directory left behind is only space.
    }
  }
  tempDirs.clear();
}

// The children first: a server still writing into its data dir would recreate files in it.
process.on('exit', () => {
  killChildren();
  removeTempDirs();
});
if (underTestRunner) {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const) {
    process.once(signal, () => {
      killChildren();
      // process.exit runs the 'exit' handlers, among them playwright's, which kills its browsers.
      process.exit(code);
    });
  }
  after(async () => {
    const left = [...open];
    open.clear();
    await Promise.allSettled(left.map((c) => c.close()));
  });
}

/** Kills the child when this process ends, unless it has exited by then. */
export function trackChild<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/**
 * Closes `thing` after the file's tests if no one closed it before; its `close` is wrapped so that
 * closing it yourself (which tests should do, in `t.after`/`after`/`finally`) unregisters it.
 */
export function trackOpen<T extends Closeable>(thing: T): T {
  open.add(thing);
  const close = thing.close.bind(thing);
  thing.close = () => {
    open.delete(thing);
    return close();
  };
  return thing;
}

/** Removes `dir` (recursively) when this process exits; returns it. */
export function trackTempDir(dir: string): string {
  tempDirs.add(dir);
  return dir;
}
