import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, waitFor } from './helpers/server.ts';

/**
 * Retry only where it can help (issue 42, point 5): a job that failed for a reason the same input
 * meets again (bad input, a missing tag, a source that cannot be fetched by version) says
 * `retryable: false` and its retry answers 409; a failure a retry may cure, and a cancel, say true.
 */

interface JobBody {
  id: number;
  state: string;
  retryable: boolean;
  error: string | null;
  version: string | null;
}

test('a permanent failure is not retryable; a transient one and a cancelled job are', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const get = async (id: number) => (await (await s.api(`/api/jobs/${id}`)).json()) as JobBody;

  // A version fetch for a library not added from Git: the fetcher refuses it (validation_error).
  const { id: unsupported } = await s.services.jobs.enqueue(
    'version-fetch',
    { libraryId: '/acme/imported', version: '9', repoUrl: null },
    { libraryId: '/acme/imported' },
  );
  const failed = (await waitFor(async () => {
    const j = await get(unsupported);
    return j.state === 'failed' ? j : null;
  }))!;
  assert.match(failed.error ?? '', /not added from a Git repository/);
  assert.equal(failed.retryable, false);
  assert.equal(failed.version, '9');
  const refused = await s.api(`/api/jobs/${unsupported}/retry`, { method: 'POST' });
  assert.equal(refused.status, 409);
  assert.match(((await refused.json()) as { message: string }).message, /a retry does not change/);

  // Failures recorded as the queue records them: a network error may pass, a missing page not.
  const store = s.services.store.jobs;
  const now = new Date().toISOString();
  const failedWith = async (code: string | null) => {
    const id = await store.insert('crawl', { libraryId: '/websites/x', startUrl: 'http://docs.invalid/' }, '/websites/x', null, now);
    await store.finish(id, 'failed', 'it broke', now, code);
    return id;
  };
  assert.equal((await get(await failedWith('fetch_failed'))).retryable, true);
  assert.equal((await get(await failedWith(null))).retryable, true, 'an unknown failure may be transient');
  assert.equal((await get(await failedWith('validation_error'))).retryable, false);
  const cancelled = await store.insert('git', { libraryId: '/acme/w', tag: 'v2.0.0' }, '/acme/w', null, now);
  await store.finish(cancelled, 'cancelled', 'cancelled', now);
  const c = await get(cancelled);
  assert.deepEqual([c.retryable, c.version], [true, 'v2.0.0']);
  // A kind whose input is gone once it ended is never retryable.
  const imp = await store.insert('import', {}, '/acme/i', null, now);
  await store.finish(imp, 'failed', 'bad bundle', now, 'internal_error');
  assert.equal((await get(imp)).retryable, false);
  // The list says the same as the detail.
  const listed = (await (await s.api('/api/jobs?kind=version-fetch')).json()) as { jobs: JobBody[] };
  assert.equal(listed.jobs.find((j) => j.id === unsupported)?.retryable, false);
});
