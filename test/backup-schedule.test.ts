import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, waitFor } from './helpers/server.ts';

test('scheduled backups: written on the cron schedule, the newest STACKS_BACKUP_KEEP kept, manual ones never deleted, each audited', async () => {
  // Every second (node-cron's six-field form), keeping two.
  const s = await startTestServer({ config: { backupSchedule: '* * * * * *', backupKeep: 2 } });
  try {
    // A scheduled backup may be running (409 conflict, one backup at a time): ask again until this one is taken.
    await waitFor(
      async () => {
        const manual = await s.api('/api/backup', { method: 'POST' });
        assert.ok(manual.status === 200 || manual.status === 409, `status ${manual.status}`);
        return manual.status === 200 ? true : null;
      },
      30_000,
      100,
    );
    await waitFor(
      async () =>
        (await s.services.audit.list({ limit: 100, action: 'backupCreate' })).entries.filter((e) => e.actor.kind === 'operator' && e.outcome === 'ok').length >=
        4,
      30_000,
      200,
    );
    const list = s.services.backups.list();
    assert.equal(list.filter((b) => b.scheduled).length, 2, JSON.stringify(list));
    assert.ok(
      list.some((b) => !b.scheduled),
      'the manual backup stays',
    );
    assert.ok(list.every((b) => /^stacks-backup-\d{4}-\d\d-\d\dT[\d-]+Z(-scheduled)?\.tar\.gz$/.test(b.name)));
  } finally {
    await s.close();
  }
});
