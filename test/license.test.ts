import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LicenseFile, LicenseService, loadVerifyKeys, signLicense, type LicensePayload } from '../server/license/license.ts';
import { ApiError } from '../lib/errors.ts';
import { ROOT, DEV_PRIVATE_KEY, devLicense, startTestServer, tempDir } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';

const keys = loadVerifyKeys(path.join(ROOT, 'licenses'));

function payload(overrides: Partial<LicensePayload> = {}): LicensePayload {
  return {
    licensee: 'Acme',
    edition: 'enterprise',
    issuedAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 86400_000).toISOString(),
    maxMembers: 5,
    features: [],
    ...overrides,
  };
}

function serviceWith(text: string | null, dev = true): LicenseService {
  const file = path.join(tempDir(), 'license.json');
  if (text !== null) fs.writeFileSync(file, text);
  return new LicenseService(keys, new LicenseFile(file), dev);
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err.code;
  }
  return 'none';
}

test('license states: missing, valid, expired, forged, tampered, dev key outside dev mode', () => {
  assert.equal(
    codeOf(() => serviceWith(null).require()),
    'license_required',
  );
  assert.equal(serviceWith(devLicense()).status().state, 'valid');
  assert.equal(serviceWith(devLicense()).require().licensee, 'Test Co');

  const expired = devLicense({ expiresAt: new Date(Date.now() - 1000).toISOString() });
  assert.equal(serviceWith(expired).status().state, 'expired');
  assert.equal(
    codeOf(() => serviceWith(expired).require()),
    'license_expired',
  );

  const forgedKey = crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const forged = JSON.stringify(signLicense(payload(), forgedKey));
  assert.equal(serviceWith(forged).status().state, 'invalid');
  assert.equal(
    codeOf(() => serviceWith(forged).require()),
    'license_invalid',
  );

  const tampered = JSON.parse(devLicense()) as { payload: LicensePayload; signature: string };
  tampered.payload.maxMembers = 1000;
  assert.equal(serviceWith(JSON.stringify(tampered)).status().state, 'invalid');

  assert.equal(serviceWith('not json').status().state, 'invalid');
  // The committed development key is honoured only in dev mode.
  assert.equal(serviceWith(devLicense(), false).status().state, 'invalid');
});

test('GET /api/license shows the license without its signature; read endpoints work without one', async () => {
  const s = await startTestServer({ license: false });
  try {
    const none = (await (await s.api('/api/license')).json()) as { state: string };
    assert.equal(none.state, 'missing');
    assert.equal((await s.api('/ping', { auth: null })).status, 200);
    fs.writeFileSync(path.join(s.dataDir, 'license.json'), devLicense());
    const res = await s.api('/api/license');
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(text).state, 'valid');
    assert.equal(JSON.parse(text).license.licensee, 'Test Co');
    assert.ok(!text.includes('signature'), 'the signature is never shown');
  } finally {
    await s.close();
  }
});

test('CLI: license issue, install and status', async () => {
  const dir = tempDir();
  const out = path.join(dir, 'acme.license.json');
  const issued = await runCli([
    'license',
    'issue',
    '--private-key',
    DEV_PRIVATE_KEY,
    '--licensee',
    'Acme',
    '--expires',
    '2099-12-31',
    '--max-members',
    '7',
    '--out',
    out,
  ]);
  assert.equal(issued.code, 0, issued.stderr);
  const dataDir = path.join(dir, 'data');
  const installed = await runCli(['license', 'install', out, '--data-dir', dataDir, '--dev']);
  assert.equal(installed.code, 0, installed.stderr);
  const status = await runCli(['license', 'status', '--data-dir', dataDir, '--dev', '--json']);
  assert.equal(status.code, 0, status.stderr);
  const st = JSON.parse(status.stdout) as { state: string; license: LicensePayload };
  assert.equal(st.state, 'valid');
  assert.equal(st.license.maxMembers, 7);
  assert.ok(!status.stdout.includes('signature'));
  // Without dev mode the development-signed license does not verify.
  const prod = await runCli(['license', 'status', '--data-dir', dataDir]);
  assert.equal(prod.code, 1);
  assert.match(prod.stdout, /^invalid/);
  // Installing a forged file is refused and leaves the installed one in place.
  const forgedKey = crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const forgedFile = path.join(dir, 'forged.json');
  fs.writeFileSync(forgedFile, JSON.stringify(signLicense(payload(), forgedKey)));
  const refused = await runCli(['license', 'install', forgedFile, '--data-dir', dataDir, '--dev']);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /signature/);
  assert.equal(JSON.parse(fs.readFileSync(path.join(dataDir, 'license.json'), 'utf8')).payload.licensee, 'Acme');
});
