import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, devLicense } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';
import { FIXTURES } from './helpers/fixtures.ts';

test('stacks add files / openapi index into the data dir; a broken spec exits non-zero with the parse error', async () => {
  const dir = tempDir();
  try {
    fs.writeFileSync(path.join(dir, 'license.json'), devLicense());
    const files = await runCli([
      'add',
      'files',
      path.join(FIXTURES, 'documents/pydeprecate-cli.docx'),
      path.join(FIXTURES, 'documents/docker-cluster-volumes.pdf'),
      '--collection',
      'CLI test',
      '--data-dir',
      dir,
      '--dev',
    ]);
    assert.equal(files.code, 0, files.stderr);
    assert.match(files.stdout, /2 documents queued for indexing as \/files\/cli-test\./);
    assert.match(files.stdout, /indexed \/files\/cli-test: \d+ snippets/);
    const broken = await runCli(['add', 'openapi', path.join(FIXTURES, 'openapi/broken.openapi.yaml'), '--data-dir', dir, '--dev']);
    assert.notEqual(broken.code, 0);
    assert.match(broken.stderr, /broken\.openapi\.yaml: YAML parse error at line 15, column 7/);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'staging/sources')), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
