import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { devLicense, tempDir } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';
import { FIXTURES } from './helpers/fixtures.ts';

const BUNDLES = path.join(FIXTURES, 'bundles');

test('stacks import FILE uses the same importer (CLI, in-process jobs)', async () => {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  const first = await runCli(['import', path.join(BUNDLES, 'valid.json'), '--data-dir', dataDir, '--dev']);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /imported \/sindresorhus\/got: 5 snippets/);
  const second = await runCli(['import', path.join(BUNDLES, 'valid.json'), '--data-dir', dataDir, '--dev']);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /skipped \/sindresorhus\/got: .*already exists/);
  const forced = await runCli(['import', path.join(BUNDLES, 'valid.json'), '--data-dir', dataDir, '--dev', '--force', '--json']);
  assert.equal(forced.code, 0, forced.stderr);
  const out = JSON.parse(forced.stdout) as { queued: string[]; results: { state: string }[] };
  assert.equal(out.queued.length, 2);
  assert.deepEqual(
    out.results.map((r) => r.state),
    ['succeeded', 'succeeded'],
  );
  const bad = await runCli(['import', path.join(BUNDLES, 'missing-field.json'), '--data-dir', dataDir, '--dev']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /libraries\[1\]: missing required field "project"/);
  fs.rmSync(path.join(dataDir, 'license.json'));
  const unlicensed = await runCli(['import', path.join(BUNDLES, 'valid.json'), '--data-dir', dataDir, '--dev', '--force']);
  assert.equal(unlicensed.code, 2);
  assert.match(unlicensed.stderr, /license/i);
});
