import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, devLicense } from './helpers/server.ts';
import { FIXTURES } from './helpers/fixtures.ts';
import { signLicense } from '../server/license/license.ts';

const valid = fs.readFileSync(path.join(FIXTURES, 'bundles/valid.json'));

test('import needs an owner/admin key and a valid license, checked before the body is read', async () => {
  const s = await startTestServer({ license: false });
  const licensePath = path.join(s.dataDir, 'license.json');
  const post = (auth?: string | null, body: BodyInit = new Uint8Array(valid)) =>
    s.api('/api/import-libraries', { method: 'POST', headers: { 'content-type': 'application/json' }, body, auth });
  const expect = async (res: Response, status: number, error: string) => {
    const body = (await res.json()) as { error: string; message: string };
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.error, error);
    assert.ok(body.message.length > 0);
  };
  try {
    // Keys first: none, a wrong one, a member's.
    await expect(await post(null), 401, 'invalid_api_key');
    await expect(await post('stk_not_a_real_key'), 401, 'invalid_api_key');
    const member = await s.services.keys.create({ name: 'reader', memberName: 'reader', role: 'member' });
    await expect(await post(member.key), 403, 'forbidden');
    const admin = await s.services.keys.create({ name: 'admin', memberName: 'admin', role: 'admin' });

    // No license installed.
    await expect(await post(), 403, 'license_required');
    // The license is checked before the body: a broken body still gets the license error.
    await expect(await post(undefined, '{"libraries": [ broken'), 403, 'license_required');

    // Expired (properly signed).
    fs.writeFileSync(licensePath, devLicense({ issuedAt: '2020-01-01T00:00:00.000Z', expiresAt: '2021-01-01T00:00:00.000Z' }));
    await expect(await post(), 403, 'license_expired');

    // Forged: a valid license whose payload was edited after signing.
    const forged = JSON.parse(devLicense()) as { payload: { licensee: string; maxMembers: number | null } };
    forged.payload.licensee = 'Someone Else';
    forged.payload.maxMembers = 100000;
    fs.writeFileSync(licensePath, JSON.stringify(forged));
    await expect(await post(), 403, 'license_invalid');

    // Signed with a key pair that the installation does not trust.
    const { privateKey } = crypto.generateKeyPairSync('ed25519');
    const foreign = signLicense(
      {
        licensee: 'Pirate',
        edition: 'enterprise',
        issuedAt: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 86400_000).toISOString(),
        maxMembers: null,
        features: [],
      },
      privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    fs.writeFileSync(licensePath, JSON.stringify(foreign));
    await expect(await post(), 403, 'license_invalid');

    fs.writeFileSync(licensePath, 'not json');
    await expect(await post(), 403, 'license_invalid');

    const uploads = path.join(s.dataDir, 'uploads');
    assert.ok(
      !fs.existsSync(uploads) || fs.readdirSync(uploads, { recursive: true }).filter((f) => !String(f).startsWith('staged')).length === 0,
      'no upload was stored',
    );
    assert.deepEqual(await s.services.jobs.list(), []);
    assert.deepEqual(s.services.store.libraries.list(), []);

    // A valid license: owner and admin keys may import; read endpoints never needed one.
    fs.writeFileSync(licensePath, devLicense());
    const ok = await post(admin.key);
    assert.equal(ok.status, 200);
    assert.equal(((await ok.json()) as { queued: string[] }).queued.length, 2);
    await s.services.jobs.idle();
    assert.equal(s.services.store.libraries.list().length, 2);
  } finally {
    await s.close();
  }
});
