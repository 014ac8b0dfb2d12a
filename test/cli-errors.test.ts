import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runStacks, spawnStacks, tempDir } from './helpers/server.ts';
import { dataDirWithLibrary, isOneLine, runCli } from './helpers/cli.ts';

// Production mode: no STACKS_DEV, so `search` answers on the retrieval worker threads.
const PROD: NodeJS.ProcessEnv = { STACKS_DEV: '' };
let dataDir: string;

before(async () => {
  dataDir = await dataDirWithLibrary();
});

test('stacks search in production mode prints the answer and exits 0 (retrieval workers)', async () => {
  const r = await runStacks(['search', 'widget', 'retry', 'option', '-l', '/acme/widgets', '--data-dir', dataDir], PROD);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Library: \/acme\/widgets/);
  assert.match(r.stdout, /retry/);
  const json = await runStacks(['search', 'widget', 'cache', '-l', '/acme/widgets', '--json', '--data-dir', dataDir], PROD);
  assert.equal(json.code, 0, json.stderr);
  assert.ok(JSON.parse(json.stdout));
});

test('a --data-dir without a Stacks database is refused by reading commands and is not created', async () => {
  const missing = path.join(tempDir(), 'dta');
  const r = await runCli(['libraries', 'list', '--data-dir', missing]);
  assert.notEqual(r.code, 0);
  assert.ok(isOneLine(r.stderr), r.stderr);
  assert.match(r.stderr, /no Stacks database/);
  assert.ok(r.stderr.includes(missing), r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(fs.existsSync(missing), false, 'the mistyped data dir must not be created');

  // An existing directory without stacks.db is refused too, and stays empty.
  const empty = tempDir();
  for (const args of [
    ['libraries', 'list', '--json'],
    ['jobs', 'list'],
    ['search', 'anything'],
    ['keys', 'list'],
    ['license', 'status'],
  ]) {
    const x = await runCli([...args, '--data-dir', empty]);
    assert.notEqual(x.code, 0, args.join(' '));
    assert.match(x.stderr, /no Stacks database/, args.join(' '));
  }
  assert.deepEqual(fs.readdirSync(empty), []);

  // The real data dir still works.
  const ok = await runCli(['libraries', 'list', '--data-dir', dataDir]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /\/acme\/widgets/);
});

test('an invalid option value gives one line naming the option and the allowed values', async () => {
  const r = await runCli(['keys', 'create', '--name', 'x', '--role', 'superuser', '--data-dir', dataDir]);
  assert.notEqual(r.code, 0);
  assert.ok(isOneLine(r.stderr), r.stderr);
  assert.match(r.stderr, /--role/);
  assert.match(r.stderr, /owner, admin, member/);
  for (const args of [
    ['jobs', 'list', '--state', 'done'],
    ['members', 'add', 'x', '--role', 'boss'],
    ['jobs', 'show', 'abc'],
  ]) {
    const x = await runCli([...args, '--data-dir', dataDir]);
    assert.notEqual(x.code, 0, args.join(' '));
    assert.ok(isOneLine(x.stderr), x.stderr);
  }
});

test('a closed stdout (stacks ... | head) ends quietly with exit 0', async () => {
  for (const args of [
    ['libraries', 'list'],
    ['libraries', 'list', '--json'],
    ['search', 'widget', 'timeout', '-l', '/acme/widgets'],
  ]) {
    const child = spawnStacks([...args, '--data-dir', dataDir], PROD);
    // The reader goes away before the command writes anything: every write meets EPIPE.
    child.stdout!.destroy();
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, `${args.join(' ')}: ${stderr}`);
    assert.doesNotMatch(stderr, /EPIPE|Error/);
  }
});

test('errors are one line on stderr (JSON with --json), never a stack trace unless STACKS_DEBUG=1', async () => {
  // Through a real process once (cli/main.ts's exit code and stderr); the other cases in process.
  const notFound = await runStacks(['libraries', 'show', '/acme/nothing', '--data-dir', dataDir]);
  assert.equal(notFound.code, 2);
  assert.equal(notFound.stderr, 'stacks: No library /acme/nothing.\n');

  const json = await runCli(['libraries', 'show', '/acme/nothing', '--json', '--data-dir', dataDir]);
  assert.equal(json.code, 2);
  assert.deepEqual(JSON.parse(json.stderr), { error: 'library_not_found', message: 'No library /acme/nothing.' });
  assert.equal(json.stdout, '');

  // An unexpected error (a file that does not exist) is one line too.
  const missing = path.join(tempDir(), 'missing-license.json');
  const unexpected = await runCli(['license', 'install', missing, '--data-dir', dataDir]);
  assert.equal(unexpected.code, 1);
  assert.ok(isOneLine(unexpected.stderr), unexpected.stderr);
  assert.match(unexpected.stderr, /^stacks: .*missing-license\.json/);

  const debug = await runCli(['license', 'install', missing, '--data-dir', dataDir], { STACKS_DEBUG: '1' });
  assert.equal(debug.code, 1);
  assert.match(debug.stderr, /\n\s+at /, 'STACKS_DEBUG=1 prints the stack');

  // A usage error from the argument parser follows the same rules.
  const usage = await runCli(['libraries', 'list', '--no-such-flag', '--json', '--data-dir', dataDir]);
  assert.notEqual(usage.code, 0);
  assert.match((JSON.parse(usage.stderr) as { message: string }).message, /--no-such-flag/);
});

test('every command accepts --json', async () => {
  const { buildProgram } = await import('../cli/program.ts');
  const leaves: string[] = [];
  const walk = (cmd: ReturnType<typeof buildProgram>, prefix: string) => {
    for (const c of cmd.commands) {
      const name = `${prefix}${c.name()}`;
      if (c.commands.length) walk(c, `${name} `);
      else {
        leaves.push(name);
        assert.ok(
          c.options.some((o) => o.long === '--json'),
          `stacks ${name} has no --json`,
        );
      }
    }
  };
  walk(buildProgram(), '');
  assert.ok(leaves.includes('jobs follow'));
  assert.ok(leaves.length > 30, leaves.join(', '));
});
