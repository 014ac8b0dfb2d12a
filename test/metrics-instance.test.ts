import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers/server.ts';
import { addIndexedLibrary, call } from './helpers/teams.ts';
import { parsePrometheus, samplesOf } from './helpers/prometheus.ts';

const TOKEN = 'scrape-token-0123456789abcdefghij';

interface Report {
  scope: 'instance' | 'teamspace';
  teamspace?: string;
  libraries: number;
  ownedLibraries?: number;
  versions: number;
  snippets: number;
  queue: Record<string, number>;
  database?: unknown;
}

const jobsIn = (r: Report) => Object.values(r.queue).reduce((n, v) => n + v, 0);

test("instance figures: GET /api/system totals and /metrics only to the instance's owner (or the scrape token); a teamspace's owner and admins get their teamspace's figures", async () => {
  const s = await startTestServer({ config: { metricsToken: TOKEN } });
  try {
    const store = s.services.store;
    const defaultId = s.services.teams.defaultTeamspaceId();
    const blue = await s.services.teams.teamspaces.create({ name: 'blue', owner: 'bea' });
    const bea = blue.key.key;
    const blueAdmin = (await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'al', role: 'admin' }, bea)).body.key.key;
    const defaultAdmin = (await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'dee', role: 'admin' })).body.key.key;
    const member = (await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'mo', role: 'member' })).body.key.key;

    // Four libraries: two for the whole instance, one kept in the default teamspace, one in blue.
    await addIndexedLibrary(s, { id: '/acme/one', visibility: 'instance' }, 'retry');
    await addIndexedLibrary(s, { id: '/acme/two', visibility: 'instance' }, 'cache');
    await addIndexedLibrary(s, { id: '/acme/secret', visibility: 'teamspace', teamspaceId: defaultId }, 'vault');
    await addIndexedLibrary(s, { id: '/blue/notes', visibility: 'teamspace', teamspaceId: blue.teamspace.id }, 'notes');
    // A job of the default teamspace, which blue's figures must not count.
    await store.jobs.insert('no-such-kind', {}, null, null, new Date().toISOString(), defaultId);

    const system = async (key: string) => {
      const r = await call<Report>(s, 'GET', '/api/system', undefined, key);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };

    // The instance's owner: every library, the database, every job.
    const all = await system(s.key);
    assert.equal(all.scope, 'instance');
    assert.equal(all.libraries, 4);
    assert.ok(all.database, 'the database size');
    const allJobs = (store.db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
    assert.equal(jobsIn(all), allJobs);

    // Blue's owner and admin: what blue may read, never the instance's totals.
    for (const key of [bea, blueAdmin]) {
      const mine = await system(key);
      assert.deepEqual([mine.scope, mine.teamspace, mine.libraries, mine.ownedLibraries, mine.versions, mine.snippets], ['teamspace', 'blue', 3, 1, 3, 6]);
      assert.equal('database' in mine, false);
      const blueJobs = (
        store.db.prepare('SELECT count(*) AS n FROM jobs WHERE teamspace_id IS NULL OR teamspace_id = ?').get(blue.teamspace.id) as { n: number }
      ).n;
      assert.equal(jobsIn(mine), blueJobs);
      assert.ok(jobsIn(mine) < jobsIn(all), "the default teamspace's job is not blue's");
    }
    // An admin of the default teamspace runs that teamspace, not the instance.
    const dee = await system(defaultAdmin);
    assert.deepEqual([dee.scope, dee.teamspace, dee.libraries, dee.ownedLibraries], ['teamspace', 'default', 3, 3]);
    assert.equal((await call(s, 'GET', '/api/system', undefined, member)).status, 403);

    // /metrics: the instance's owner and the scrape token; everyone else refused.
    assert.equal((await s.api('/metrics', { auth: null })).status, 401);
    for (const key of [bea, blueAdmin, defaultAdmin, member]) {
      const r = await call<{ error: string }>(s, 'GET', '/metrics', undefined, key);
      assert.equal(r.status, 403);
      assert.equal(r.body.error, 'forbidden');
    }
    assert.equal((await s.api('/metrics', { auth: `${TOKEN}x` })).status, 401, 'a wrong token is an invalid key');
    const owner = await s.api('/metrics');
    assert.equal(owner.status, 200);
    assert.deepEqual(
      samplesOf(parsePrometheus(await owner.text()), 'stacks_libraries').map((x) => x.value),
      [4],
    );

    // Event-loop lag (prom-client's monitorEventLoopDelay histogram): reported, as numbers, to the scrape token too.
    const scraped = await s.api('/metrics', { auth: TOKEN });
    assert.equal(scraped.status, 200);
    const m = parsePrometheus(await scraped.text());
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p50_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_eventloop_lag_max_seconds',
    ]) {
      assert.ok(m.has(name), name);
      assert.ok(
        samplesOf(m, name).every((x) => Number.isFinite(x.value) && x.value >= 0),
        name,
      );
    }
  } finally {
    await s.close();
  }
});
