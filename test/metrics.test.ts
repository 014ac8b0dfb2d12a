import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers/server.ts';
import { addIndexedLibrary, call } from './helpers/teams.ts';
import { parsePrometheus, samplesOf } from './helpers/prometheus.ts';

test("/metrics: Prometheus text with the instance owner's key, or without one on the metrics port; requests, latency, jobs, database, snippets, caches", async () => {
  const s = await startTestServer({ config: { metricsPort: 0 } });
  try {
    await addIndexedLibrary(s, { id: '/acme/widgets', visibility: 'instance' }, 'retry');
    for (let i = 0; i < 3; i++) assert.equal((await s.api('/api/v3/search?query=configure+retry&library=/acme/widgets&type=json')).status, 200);
    assert.equal((await s.api('/api/libraries/acme/nothing-here')).status, 404);
    const member = await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'mo', role: 'member' });

    // The API port: no key 401, a member 403, an owner 200.
    assert.equal((await s.api('/metrics', { auth: null })).status, 401);
    assert.equal((await s.api('/metrics', { auth: member.body.key.key })).status, 403);
    const res = await s.api('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const m = parsePrometheus(await res.text());

    assert.equal(m.get('stacks_http_requests_total')?.type, 'counter');
    assert.deepEqual(
      samplesOf(m, 'stacks_http_requests_total', { route: '/api/v3/search', status: '200' }).map((x) => x.value),
      [3],
      'three searches, under the route pattern',
    );
    assert.equal(
      samplesOf(m, 'stacks_http_requests_total', { route: '/api/libraries/:owner/:repo', status: '404' }).length,
      1,
      'IDs in the path stay out of the labels',
    );
    assert.equal(samplesOf(m, 'stacks_http_requests_total', { route: '/metrics', status: '403' }).length, 1);
    assert.equal(m.get('stacks_http_request_duration_seconds')?.type, 'histogram');
    assert.deepEqual(
      samplesOf(m, 'stacks_http_request_duration_seconds', { route: '/api/v3/search' }, '_count').map((x) => x.value),
      [3],
    );
    assert.ok(samplesOf(m, 'stacks_http_request_duration_seconds', { route: '/api/v3/search' }, '_sum')[0]!.value > 0);

    assert.deepEqual(
      samplesOf(m, 'stacks_jobs')
        .map((x) => x.labels.state)
        .sort(),
      ['cancelled', 'failed', 'queued', 'running', 'succeeded'],
      'queue depth by state',
    );
    assert.deepEqual(
      samplesOf(m, 'stacks_snippets').map((x) => x.value),
      [2],
    );
    assert.deepEqual(
      samplesOf(m, 'stacks_libraries').map((x) => x.value),
      [1],
    );
    assert.ok(samplesOf(m, 'stacks_database_bytes', { file: 'stacks.db' })[0]!.value > 0, 'the database size');
    assert.ok(samplesOf(m, 'stacks_cache_hits_total', { cache: 'teamspace_policies' })[0]!.value > 0);
    assert.equal(samplesOf(m, 'stacks_cache_entries', { cache: 'ranking_models' }).length, 1);
    assert.equal(m.get('stacks_job_duration_seconds')?.type, 'histogram');
    // the backend, no pool on SQLite, and this node's leases (none held, lost or recovered here)
    assert.deepEqual(
      samplesOf(m, 'stacks_database_info').map((x) => [x.labels.backend, x.value]),
      [['sqlite', 1]],
    );
    assert.equal(m.has('stacks_database_pool_connections'), false);
    // held: the jobs running here now (a background job may be), at most the queue's concurrency
    assert.ok(samplesOf(m, 'stacks_job_leases_held')[0]!.value <= s.services.config.jobConcurrency);
    assert.deepEqual(
      ['stacks_job_leases_lost_total', 'stacks_jobs_recovered_total'].map((n) => samplesOf(m, n).map((x) => x.value)),
      [[0], [0]],
    );
    for (const name of ['stacks_retrieval_workers', 'stacks_retrieval_in_flight', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes'])
      assert.ok(m.has(name), name);

    // The metrics port: no key, only /metrics.
    assert.ok(s.metricsUrl);
    const open = await fetch(s.metricsUrl);
    assert.equal(open.status, 200);
    assert.ok(samplesOf(parsePrometheus(await open.text()), 'stacks_http_requests_total').length > 0);
    assert.equal((await fetch(s.metricsUrl.replace('/metrics', '/api/libraries'))).status, 404);
  } finally {
    await s.close();
  }
});
