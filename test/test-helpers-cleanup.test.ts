import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT } from './helpers/server.ts';

// The helpers' temporary directories (data dirs, archives, exports) go when a test file's process
// ends; before Nov 28 every run left them all in the system's temp dir. A child process plays the
// test file: it makes a directory with a file in it, prints its path and exits.
function makeDirInChild(env: NodeJS.ProcessEnv = {}): string {
  const script = `import fs from 'node:fs'; import path from 'node:path'; import { tempDir } from './test/helpers/server.ts';
const dir = tempDir('stacks-cleanup-'); fs.writeFileSync(path.join(dir, 'stacks.db'), 'x'); console.log(dir);`;
  // Not as a test file of its own: node:test would write its protocol to stdout.
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop()!;
}

test("the helpers' temporary directories are removed when the process exits", () => {
  const dir = makeDirInChild({ KEEP_TEST_DIRS: '' });
  assert.match(path.basename(dir), /^stacks-cleanup-/);
  assert.equal(fs.existsSync(dir), false, `${dir} was left behind`);
});

test('KEEP_TEST_DIRS=1 keeps them to look into', () => {
  const dir = makeDirInChild({ KEEP_TEST_DIRS: '1' });
  try {
    assert.equal(fs.readFileSync(path.join(dir, 'stacks.db'), 'utf8'), 'x');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
