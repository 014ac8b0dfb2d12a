import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT, tempDir } from './helpers/server.ts';

// The Docker image runs as a non-root user with any UID; a /data it cannot write must stop the
// server at once with a message that says what to do (not a SQLite "unable to open" later).
const root = process.getuid?.() === 0 && fs.existsSync('/usr/bin/setpriv');
/** The other user must reach bin/stacks.js: a checkout under a private folder (mktemp -d is 0700) cannot run it. */
const reachable = (() => {
  for (let dir = ROOT; ; dir = path.dirname(dir)) {
    if ((fs.statSync(dir).mode & 0o001) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
})();

test('serve stops at once, naming the path and the user, on a data dir it cannot write', {
  skip: (!root && 'needs root and setpriv to run as another user') || (!reachable && `another user cannot reach ${ROOT}`),
}, () => {
  const parent = tempDir('stacks-readonly-');
  fs.chmodSync(parent, 0o755);
  const dataDir = path.join(parent, 'data');
  const r = spawnSync(
    '/usr/bin/setpriv',
    ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, path.join(ROOT, 'bin/stacks.js'), 'serve', '--port', '0', '--data-dir', dataDir],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, HOME: '/tmp', STACKS_OWN_DOCS: 'false' },
    },
  );
  assert.equal(r.status, 2, r.stderr);
  assert.equal(
    r.stderr.trim(),
    `stacks: The data directory ${dataDir} is not writable by this process (uid 65534, gid 65534; EACCES). Give that user write access (chown or chmod, or a named volume such as \`-v stacks-data:/data\`), or set DATA_DIR / --data-dir to a writable directory.`,
  );
  assert.equal(fs.existsSync(dataDir), false);
});
