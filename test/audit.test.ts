import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { devLicense, runStacks, startTestServer, waitFor, type TestServer } from './helpers/server.ts';
import { startFixtureServer } from './helpers/fixtures.ts';
import { AuditLog } from '../server/audit/log.ts';
import { Store } from '../server/store/index.ts';

interface Entry {
  id: number;
  action: string;
  target: string | null;
  outcome: string;
  count: number;
  teamspace: string | null;
  sourceIp: string | null;
  actor: { kind: string; keyId?: number; name?: string };
  detail: Record<string, unknown> | null;
}

async function call(
  s: TestServer,
  method: string,
  url: string,
  body: unknown,
  auth: string | null = s.key,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await s.api(url, {
    method,
    auth,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

async function audit(s: TestServer, query: string, auth: string | null = s.key): Promise<{ entries: Entry[]; next: number | null }> {
  const r = await call(s, 'GET', `/api/audit${query}`, undefined, auth);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as unknown as { entries: Entry[]; next: number | null };
}

const BUNDLE = JSON.stringify({
  libraries: [
    {
      project: '/acme/ledger',
      title: 'Ledger',
      description: 'Internal ledger',
      codeSnippets: [],
      infoSnippets: [{ id: 'https://ledger.internal/a', content: 'Entries are immutable once posted; corrections are new entries.' }],
    },
  ],
});

/** Changes over HTTP by an owner, a member and a second teamspace; refusals from a bad key. */
async function actOverHttp(s: TestServer, llmsUrl: string): Promise<{ member: string; blue: string; createdKey: string }> {
  const created = await call(s, 'POST', '/api/v2/keys', { name: 'ci bot', scope: 'read' });
  assert.equal(created.status, 201);
  const createdKey = created.body.key as string;
  assert.equal((await call(s, 'DELETE', `/api/v2/keys/${created.body.id as number}`, undefined)).status, 204);
  const imported = await s.api('/api/import-libraries?visibility=instance', { method: 'POST', headers: { 'content-type': 'application/json' }, body: BUNDLE });
  assert.equal(imported.status, 200);
  await waitFor(() => (s.services.store.libraries.currentVersion('/acme/ledger', '') ? true : null), 30_000);
  assert.equal((await call(s, 'PATCH', '/api/libraries/acme/ledger', { visibility: 'teamspace' })).status, 200);
  assert.equal((await call(s, 'PATCH', '/api/v2/policies', { libraryFilters: { quality: { requireVerified: false } } })).status, 200);
  const rule = await call(s, 'POST', '/api/v2/rules', { kind: 'global', text: 'Prefer the v2 client.' });
  assert.equal((await call(s, 'DELETE', `/api/v2/rules/${rule.body.id as number}`, undefined)).status, 204);
  assert.equal((await call(s, 'POST', '/api/v2/add/llmstxt', { llmstxtUrl: llmsUrl })).status, 200);
  const member = (await s.services.keys.create({ name: 'mia', memberName: 'mia', role: 'member' })).key;
  assert.equal((await call(s, 'PATCH', '/api/v2/policies', { libraryFilters: { mode: 'select' } }, member)).status, 403);
  for (let i = 0; i < 5; i++) assert.equal((await call(s, 'GET', '/api/jobs', undefined, 'stk_wrong-key')).status, 401);
  assert.equal((await call(s, 'POST', '/api/v2/keys', { name: 'x' }, null)).status, 401);
  const blue = (await s.services.teams.teamspaces.create({ name: 'blue', owner: 'bea' })).key.key;
  assert.equal((await call(s, 'POST', '/api/v2/keys', { name: 'blue bot' }, blue)).status, 201);
  return { member, blue, createdKey };
}

test('audit: changes, refusals and operator actions are recorded without secrets, per teamspace, and survive a restart', async (t) => {
  const site = await startFixtureServer();
  t.after(() => site.close());
  let s = await startTestServer();
  t.after(() => s.close());
  const { member, blue, createdKey } = await actOverHttp(s, `${site.url}/files/llmstxt/pagy.llms.txt`);

  // The operator on the box: a key, a license, a deleted library.
  const licenseFile = path.join(s.dataDir, 'new.license.json');
  fs.writeFileSync(licenseFile, devLicense());
  for (const args of [
    ['keys', 'create', '--name', 'laptop'],
    ['license', 'install', licenseFile],
    ['libraries', 'delete', '/acme/ledger'],
  ]) {
    const r = await runStacks([...args, '--data-dir', s.dataDir, '--dev']);
    assert.equal(r.code, 0, r.stderr);
  }

  const all = (await audit(s, '?limit=1000')).entries;
  const find = (action: string, outcome = 'ok') => all.find((e) => e.action === action && e.outcome === outcome);
  for (const action of [
    'keyCreate',
    'keyRevoke',
    'importLibraries',
    'libraryUpdate',
    'policiesUpdate',
    'ruleAdd',
    'ruleRemove',
    'addLlmsTxt',
    'licenseInstall',
    'libraryDelete',
  ]) {
    assert.ok(find(action), `${action} recorded: ${JSON.stringify(all.map((e) => e.action))}`);
  }
  assert.equal(find('importLibraries')!.target, '/acme/ledger');
  assert.equal(find('libraryUpdate')!.detail?.visibility, 'teamspace');
  const httpKey = all.find((e) => e.action === 'keyCreate' && e.target === 'ci bot');
  assert.deepEqual([httpKey?.actor.kind, httpKey?.actor.name, httpKey?.sourceIp, httpKey?.teamspace], ['key', 'admin', '127.0.0.1', 'default']);
  assert.equal(all.find((e) => e.action === 'keyCreate' && e.target === 'laptop')?.actor.kind, 'operator');
  assert.equal(find('libraryDelete')!.actor.kind, 'operator');
  const refusedPolicy = find('policiesUpdate', 'refused');
  assert.equal(refusedPolicy?.actor.name, 'mia');
  assert.equal(refusedPolicy?.detail?.error, 'forbidden');
  // Refused authentications from one address are one entry with a count.
  const refusals = all.filter((e) => e.action === 'authRefused');
  assert.equal(refusals.length, 1);
  assert.equal(refusals[0]!.count, 6);
  // No secret anywhere: not the created key, not the license text.
  const dump = JSON.stringify(s.services.store.db.prepare('SELECT * FROM audit_log').all());
  assert.ok(!dump.includes(createdKey) && !dump.includes('stk_wrong-key') && !dump.includes(fs.readFileSync(licenseFile, 'utf8').slice(0, 60)));

  // Filters and pages.
  const keyEntries = (await audit(s, '?action=keyCreate')).entries;
  assert.ok(keyEntries.length >= 2 && keyEntries.every((e) => e.action === 'keyCreate'));
  assert.ok((await audit(s, '?actor=operator')).entries.every((e) => e.actor.kind === 'operator'));
  const first = await audit(s, '?limit=2');
  const second = await audit(s, `?limit=2&before=${first.next!}`);
  assert.ok(second.entries[0]!.id < first.entries[1]!.id);
  assert.equal((await call(s, 'GET', '/api/audit?since=yesterday-ish', undefined)).status, 400);

  // Who reads what: not members; blue reads only blue's entries.
  assert.equal((await call(s, 'GET', '/api/audit', undefined, member)).status, 403);
  const blueLog = (await audit(s, '?limit=1000', blue)).entries;
  assert.ok(blueLog.length > 0 && blueLog.every((e) => e.teamspace === 'blue'), JSON.stringify(blueLog));

  // Append-only, and kept across a restart.
  assert.throws(() => s.services.store.db.prepare("UPDATE audit_log SET action = 'nothing'").run(), /append-only/);
  const ownerKey = s.key;
  await s.close();
  s = await startTestServer({ dataDir: s.dataDir });
  assert.equal((await audit(s, '?limit=1000', ownerKey)).entries.length, all.length);
});

test('audit: entries past the retention are pruned; refusal floods are capped', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-audit-'));
  const store = Store.open(dir);
  try {
    const rows = () =>
      store.db.prepare('SELECT action, source_ip, count FROM audit_log ORDER BY id').all() as { action: string; source_ip: string | null; count: number }[];
    let now = new Date('2026-01-01T10:00:00Z');
    const log = new AuditLog(
      store.audit,
      30,
      (err) => assert.fail(String(err)),
      () => now,
    );
    for (let i = 0; i < 1500; i++) await log.refusedAuth(`10.0.${Math.floor(i / 250)}.${i % 250}`, 'bad key');
    assert.equal(rows().length, 1001, 'one entry per address up to the cap, then one for all others');
    assert.equal(rows().find((r) => r.source_ip === '*')?.count, 500);
    now = new Date('2026-03-01T00:00:00Z');
    await log.record({ actor: { kind: 'operator', keyId: null, name: 'root', teamspaceId: null }, action: 'keyCreate', outcome: 'ok' });
    await log.prune();
    assert.deepEqual(
      rows().map((r) => r.action),
      ['keyCreate'],
    );
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
