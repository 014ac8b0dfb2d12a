import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';

test('stacks search and stacks resolve answer from the services of a data dir', async () => {
  const s = await startTestServer();
  const dataDir = s.dataDir;
  try {
    await loadSearchCorpus(s.services, ['fastify', 'fastify-v4.29.1', 'pino']);
  } finally {
    await s.close();
  }
  const env = { STACKS_DEV: '1' };
  const text = await runCli(['search', 'create', 'a', 'child', 'logger', '-l', 'pino', '-l', 'fastify', '--data-dir', dataDir], env);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^### /);
  assert.match(text.stdout, /Library: \/pinojs\/pino/);

  const json = await runCli(['search', 'register', 'a', 'plugin', '-l', 'fastify', '--lib-version', 'v4', '--json', '--data-dir', dataDir], env);
  assert.equal(json.code, 0, json.stderr);
  const body = JSON.parse(json.stdout) as { version: { status: string; libraries: { libraryId: string }[] } };
  assert.equal(body.version.status, 'verified');
  assert.equal(body.version.libraries[0]!.libraryId, '/fastify/fastify/v4.29.1');
  assert.match(json.stderr, /X-Stacks-Search-Version: verified/);

  const bad = await runCli(['search', 'x', '--lib-version', '4.x', '--data-dir', dataDir], env);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /version/);

  const resolved = await runCli(['resolve', 'fastfy', 'plugins', '--json', '--data-dir', dataDir], env);
  assert.equal(resolved.code, 0, resolved.stderr);
  assert.equal((JSON.parse(resolved.stdout) as { results: { id: string }[] }).results[0]!.id, '/fastify/fastify');
});
