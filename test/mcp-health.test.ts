import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer } from './helpers/server.ts';

test('/api/health reports version, license, database, queue and uptime without a key', async () => {
  const s = await startTestServer();
  try {
    const res = await s.api('/api/health', { auth: null });
    assert.equal(res.status, 200);
    const h = (await res.json()) as Record<string, any>;
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };
    assert.equal(h.status, 'ok');
    assert.equal(h.version, pkg.version);
    assert.equal(typeof h.uptimeSeconds, 'number');
    assert.ok(h.uptimeSeconds >= 0);
    assert.equal(h.license.state, 'valid');
    assert.ok(Date.parse(h.license.expiresAt) > Date.now(), 'license expiry is shown');
    assert.deepEqual(h.database, { status: 'ok', backend: 'sqlite', pool: null });
    assert.deepEqual(Object.keys(h.queue.jobs).sort(), ['cancelled', 'failed', 'queued', 'running', 'succeeded']);
    // held: the jobs running here now (a background job may be); none lost or recovered on one node
    assert.deepEqual({ ...h.queue.leases, held: h.queue.leases.held <= s.services.config.jobConcurrency }, { held: true, lost: 0, recovered: 0 });

    const ready = await s.api('/api/ready', { auth: null });
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready' });
  } finally {
    await s.close();
  }
});

test('/api/health shows a missing license; /api/ready is 503 with {error, message} once the database is gone', async () => {
  const s = await startTestServer({ license: false });
  try {
    const h = (await (await s.api('/api/health', { auth: null })).json()) as Record<string, any>;
    assert.equal(h.license.state, 'missing');
    assert.equal(h.license.expiresAt, null);

    await s.services.jobs.stop();
    s.services.store.close();
    const ready = await s.api('/api/ready', { auth: null });
    assert.equal(ready.status, 503);
    const body = (await ready.json()) as { error: string; message: string };
    assert.equal(body.error, 'not_ready');
    assert.match(body.message, /database/);
    const degraded = (await (await s.api('/api/health', { auth: null })).json()) as Record<string, any>;
    assert.equal(degraded.status, 'degraded');
    assert.equal(degraded.database.status, 'unavailable');
    // the node's own figures stay known without the database
    assert.deepEqual([degraded.database.backend, degraded.queue.status, degraded.queue.leases], ['sqlite', 'unavailable', { held: 0, lost: 0, recovered: 0 }]);
  } finally {
    await s.close();
  }
});
