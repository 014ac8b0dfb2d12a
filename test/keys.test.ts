import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { devLicense, runStacks, startTestServer, tempDir } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';
import { hashKey } from '../server/auth/keys.ts';
import { httpMcpClient, loadCorpusBundles, textOf } from './helpers/mcp.ts';

test('keys: created keys authenticate, are stored hashed, and stop working when revoked', async () => {
  const s = await startTestServer();
  try {
    assert.match(s.key, /^stk_[A-Za-z0-9_-]{40,}$/);
    const created = await s.services.keys.create({ name: 'ci', memberName: 'ci-bot', role: 'member' });
    const rows = s.services.store.db.prepare('SELECT hash FROM api_keys').all() as { hash: string }[];
    assert.ok(rows.some((r) => r.hash === hashKey(created.key)));
    const dump = JSON.stringify(s.services.store.db.prepare('SELECT * FROM api_keys').all());
    assert.ok(!dump.includes(created.key), 'the key itself is never stored');

    assert.equal((await s.api('/api/jobs', { auth: created.key })).status, 200);
    assert.equal((await s.api('/api/jobs', { auth: null })).status, 401);
    const wrong = await s.api('/api/jobs', { auth: 'stk_not-a-real-key' });
    assert.equal(wrong.status, 401);
    assert.deepEqual(Object.keys((await wrong.json()) as object).sort(), ['error', 'message']);
    // Alternative headers used by tool clients.
    assert.equal((await s.api('/api/jobs', { auth: null, headers: { 'x-api-key': created.key } })).status, 200);
    assert.equal((await s.api('/api/jobs', { auth: null, headers: { STACKS_API_KEY: created.key } })).status, 200);
    // A member may read jobs but not cancel them.
    const cancel = await s.api('/api/jobs/1/cancel', { method: 'POST', auth: created.key });
    assert.equal(cancel.status, 403);

    await s.services.keys.revoke(created.id);
    const revoked = await s.api('/api/jobs', { auth: created.key });
    assert.equal(revoked.status, 401);
    assert.equal(((await revoked.json()) as { error: string }).error, 'invalid_api_key');
  } finally {
    await s.close();
  }
});

test('CLI: keys create prints the key once, list never shows it, revoke disables it', async () => {
  const dataDir = tempDir();
  const created = await runCli(['keys', 'create', '--name', 'laptop', '--role', 'admin', '--data-dir', dataDir]);
  assert.equal(created.code, 0, created.stderr);
  const key = /stk_[A-Za-z0-9_-]+/.exec(created.stdout)?.[0];
  assert.ok(key);
  const list = await runCli(['keys', 'list', '--json', '--data-dir', dataDir]);
  assert.equal(list.code, 0, list.stderr);
  assert.ok(!list.stdout.includes(key));
  const keys = JSON.parse(list.stdout) as { id: number; name: string; role: string; revokedAt: string | null }[];
  const mine = keys.find((k) => k.name === 'laptop')!;
  assert.equal(mine.role, 'admin');

  const s = await startTestServer({ dataDir });
  try {
    assert.equal((await s.api('/api/jobs', { auth: key })).status, 200);
    const revoked = await runStacks(['keys', 'revoke', String(mine.id), '--data-dir', dataDir]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await s.api('/api/jobs', { auth: key })).status, 401);
  } finally {
    await s.close();
  }
});

test('CLI: keys create for a new member respects the license maxMembers', async () => {
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense({ maxMembers: 1 }));
  const first = await runCli(['keys', 'create', '--name', 'a', '--member', 'alice', '--role', 'owner', '--data-dir', dataDir, '--dev']);
  assert.equal(first.code, 0, first.stderr);
  const second = await runCli(['keys', 'create', '--name', 'b', '--member', 'bob', '--data-dir', dataDir, '--dev']);
  assert.equal(second.code, 2);
  assert.match(second.stderr, /allows 1 members/);
  const again = await runCli(['keys', 'create', '--name', 'a2', '--member', 'alice', '--data-dir', dataDir, '--dev']);
  assert.equal(again.code, 0, 'another key for an existing member is fine');
  const list = JSON.parse((await runCli(['keys', 'list', '--json', '--data-dir', dataDir, '--dev'])).stdout) as { memberName: string; role: string }[];
  assert.ok(
    list.filter((k) => k.memberName === 'alice').every((k) => k.role === 'owner'),
    'a new key does not change the member role',
  );
});

test('a read-scoped key searches, asks for context and uses MCP, and is refused everything else', async (t) => {
  const s = await startTestServer({ config: { allowAnonymousSearch: false } });
  t.after(() => s.close());
  await loadCorpusBundles(s.services, ['pino']);
  // Made over the API by an admin (the owner's key here), and with the CLI.
  const res = await s.api('/api/v2/keys', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'assistant', scope: 'read' }),
  });
  assert.equal(res.status, 201);
  const made = (await res.json()) as { key: string; scope: string };
  assert.equal(made.scope, 'read');
  const bad = await s.api('/api/v2/keys', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'x', scope: 'write' }),
  });
  assert.equal(bad.status, 400);
  const read = made.key;

  assert.equal((await s.api('/api/v3/search?query=redact&library=pino', { auth: read })).status, 200);
  assert.equal((await s.api('/api/v2/context?libraryId=/pinojs/pino&query=redact', { auth: read })).status, 200);
  assert.equal((await s.api('/api/v2/libs/search?libraryName=pino&query=redact', { auth: read })).status, 200);
  const mcp = await httpMcpClient(s.url, { authorization: `Bearer ${read}` });
  t.after(() => mcp.close());
  const answer = await mcp.callTool({ name: 'query-docs', arguments: { libraryId: '/pinojs/pino', query: 'redact keys' } });
  assert.match(textOf(answer), /redact/i);

  for (const [method, path] of [
    ['GET', '/api/jobs'],
    ['GET', '/api/v2/usage'],
    ['GET', '/api/v2/policies'],
    ['GET', '/api/v2/keys'],
    ['POST', '/api/v2/add/llmstxt'],
    ['POST', '/api/import-libraries'],
  ] as const) {
    const r = await s.api(path, { method, auth: read, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
    assert.equal(r.status, 403, `${method} ${path}`);
    const body = (await r.json()) as { error: string; message: string };
    assert.equal(body.error, 'forbidden');
    assert.match(body.message, /read scope/);
  }

  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  const cli = await runCli(['keys', 'create', '--name', 'editor', '--scope', 'read', '--json', '--data-dir', dataDir], { STACKS_DEV: '1' });
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal((JSON.parse(cli.stdout) as { scope: string }).scope, 'read');
  const listed = await runCli(['keys', 'list', '--data-dir', dataDir], { STACKS_DEV: '1' });
  assert.match(listed.stdout, /editor .*scope=read/);
  const wrong = await runCli(['keys', 'create', '--name', 'x', '--scope', 'write', '--data-dir', dataDir], { STACKS_DEV: '1' });
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /--scope/);
});
