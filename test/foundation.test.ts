import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers/server.ts';

test('ping answers and unknown routes give the error shape', async () => {
  const s = await startTestServer();
  try {
    const ping = await s.api('/ping', { auth: null });
    assert.equal(ping.status, 200);
    assert.deepEqual(await ping.json(), { status: 'ok', message: 'pong' });
    assert.ok(ping.headers.get('x-content-type-options'), 'helmet headers are set');
    const missing = await s.api('/api/nope');
    assert.equal(missing.status, 404);
    const body = (await missing.json()) as { error: string; message: string };
    assert.equal(body.error, 'not_found');
    assert.equal(typeof body.message, 'string');
  } finally {
    await s.close();
  }
});
