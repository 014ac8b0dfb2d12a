import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from './helpers/server.ts';
import { hdr, libsOf, searchSuite } from './helpers/search-api.ts';

/**
 * Version resolution on GET /api/v3/search over HTTP against the real corpora (test/helpers/search-api.ts):
 * version tags and the version parameter, prerelease rules, the x-stacks-search-* headers, and
 * version-fetch jobs for missing versions.
 */

let s: TestServer;

const { search } = searchSuite((server) => {
  s = server;
});

describe('versions: tags on library values, the version parameter, latest', () => {
  test('rule 3 and 6: a version tag on a library value resolves semver-aware; snippets carry the served tag', async () => {
    for (const [value, served] of [
      ['/fastify/fastify/v4', 'v4.29.1'],
      ['/fastify/fastify@4.29', 'v4.29.1'],
      ['/fastify/fastify@3', 'v3.29.5'],
      ['fastify@v3.29.5', 'v3.29.5'],
      ['/someone/fastify@4', 'v4.29.1'],
      ['fastify 3_29', 'v3.29.5'],
    ]) {
      const { res, body } = await search({ query: 'register a plugin', library: value! });
      assert.equal(res.status, 200, value);
      assert.deepEqual([...libsOf(body)], [`/fastify/fastify/${served}`], value);
      assert.deepEqual(
        body.version,
        {
          status: 'verified',
          libraries: [{ libraryId: `/fastify/fastify/${served}`, requested: value!.split(/[@ ]|\/(?=v?\d)/).pop(), served, status: 'verified' }],
        },
        value,
      );
      assert.deepEqual(hdr(res), { status: null, reason: null, version: 'verified' }, value);
    }
  });

  test('the version parameter: v4 -> newest 4.x, 4.29 -> 4.29.x, _ as separator; requested is echoed', async () => {
    for (const [v, served] of [
      ['v4', 'v4.29.1'],
      ['4', 'v4.29.1'],
      ['4.29', 'v4.29.1'],
      ['4_29_1', 'v4.29.1'],
      ['V3', 'v3.29.5'],
      ['3.29.5+build.5', 'v3.29.5'],
    ]) {
      const { res, body } = await search({ query: 'register a plugin', library: 'fastify', version: v! });
      assert.equal(res.status, 200);
      assert.equal(body.version?.requested, v);
      assert.equal(body.version?.status, 'verified');
      assert.deepEqual(body.version?.libraries, [{ libraryId: `/fastify/fastify/${served}`, requested: v, served, status: 'verified' }]);
      assert.equal(res.headers.get('x-stacks-search-version'), 'verified');
      assert.equal(res.headers.get('x-stacks-search-status'), null);
    }
  });

  test('rule 4: latest in any case behaves as no version', async () => {
    for (const v of ['latest', 'LATEST', 'Latest']) {
      const { res, body } = await search({ query: 'register a plugin', library: 'fastify', version: v });
      assert.equal('version' in body, false);
      assert.deepEqual(hdr(res), { status: null, reason: null, version: null });
      assert.deepEqual([...libsOf(body)], ['/fastify/fastify']);
    }
    const { body } = await search({ query: 'register a plugin', library: '/fastify/fastify@latest' });
    assert.equal('version' in body, false);
  });
});

describe('versions not indexed as asked: current documentation, prereleases, branches', () => {
  test('rule 6: one library without the version serves current documentation, partial + versionUnverified', async () => {
    const { res, body } = await search({ query: 'register a plugin', library: 'fastify', version: 'v9' });
    assert.equal(res.status, 200);
    assert.deepEqual(hdr(res), { status: 'partial', reason: 'versionUnverified', version: 'unverified' });
    assert.deepEqual(body.version, {
      requested: 'v9',
      status: 'unverified',
      libraries: [{ libraryId: '/fastify/fastify', requested: 'v9', served: null, status: 'unverified' }],
    });
    assert.deepEqual([...libsOf(body)], ['/fastify/fastify']);
  });

  test('rule 6: only a prerelease matches a stable request -> versionPrerelease; a prerelease request is verified', async () => {
    let r = await search({ query: 'spin the widget', library: 'widget', version: '2' });
    assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'versionPrerelease', version: 'prerelease' });
    assert.deepEqual(r.body.version?.libraries, [{ libraryId: '/acme/widget/2.0.0-beta.1', requested: '2', served: '2.0.0-beta.1', status: 'prerelease' }]);
    r = await search({ query: 'spin the widget', library: 'widget', version: 'v2.0.0-beta.1' });
    assert.deepEqual(hdr(r.res), { status: null, reason: null, version: 'verified' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget/2.0.0-beta.1']);
    r = await search({ query: 'spin the widget', library: 'widget', version: 'V1_4_0' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget/1.4.0']);
    assert.equal(r.body.version?.status, 'verified');
    // Stable preferred over prerelease inside the range: 1 -> 1.4.0.
    r = await search({ query: 'spin the widget', library: 'widget', version: '1' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget/1.4.0']);
    r = await search({ query: 'spin the widget', library: 'widget', version: 'V1_2_3-rc.1' });
    assert.deepEqual(hdr(r.res), { status: 'partial', reason: 'versionUnverified', version: 'unverified' });
    assert.deepEqual([...libsOf(r.body)], ['/acme/widget']);
  });

  test('current documentation whose branch is the requested version serves it as verified (served = the request)', async () => {
    let r = await search({ query: 'spin the widget', library: 'sprocket', version: 'v3' });
    assert.deepEqual(r.body.version, {
      requested: 'v3',
      status: 'verified',
      libraries: [{ libraryId: '/acme/sprocket', requested: 'v3', served: 'v3', status: 'verified' }],
    });
    assert.deepEqual(hdr(r.res), { status: null, reason: null, version: 'verified' });
    r = await search({ query: 'spin the widget', library: 'sprocket', version: '3.1' });
    assert.equal(r.body.version?.status, 'unverified', '3.x does not say which 3.y');
  });
});

describe('versions across libraries and version-fetch jobs', () => {
  test('rule 7: several libraries: the version is a preference and each library reports what it served', async () => {
    const { res, body } = await search({ query: 'plugins and configuration', library: ['fastify', 'vite'], version: '4' });
    assert.equal(res.status, 200);
    assert.deepEqual([...libsOf(body)].sort(), ['/fastify/fastify/v4.29.1', '/vitejs/vite']);
    assert.equal(body.version?.status, 'unverified');
    assert.deepEqual(
      [...body.version!.libraries].sort((a, b) => a.libraryId.localeCompare(b.libraryId)),
      [
        { libraryId: '/fastify/fastify/v4.29.1', requested: '4', served: 'v4.29.1', status: 'verified' },
        { libraryId: '/vitejs/vite', requested: '4', served: null, status: 'unverified' },
      ],
    );
    assert.deepEqual(hdr(res), { status: 'partial', reason: 'versionUnverified', version: 'unverified' });
    // A tag on one value applies to that library only; the other asked nothing.
    const r = await search({ query: 'plugins and configuration', library: ['fastify@3', 'vite'] });
    assert.deepEqual(r.body.version, {
      status: 'verified',
      libraries: [{ libraryId: '/fastify/fastify/v3.29.5', requested: '3', served: 'v3.29.5', status: 'verified' }],
    });
    assert.deepEqual(hdr(r.res), { status: null, reason: null, version: 'verified' });
  });

  test('rule 5: without library values the version applies when the question names one product, not several', async () => {
    let r = await search({ query: 'how do I register a plugin in fastify?', version: 'v4' });
    assert.deepEqual([...libsOf(r.body)], ['/fastify/fastify/v4.29.1']);
    assert.equal(r.body.version?.status, 'verified');
    r = await search({ query: 'how do I log requests in fastify with pino?', version: 'v4' });
    assert.deepEqual([...libsOf(r.body)].sort(), ['/fastify/fastify', '/pinojs/pino']);
    assert.equal(r.body.version?.requested, 'v4');
    assert.ok(r.body.version!.libraries.every((l) => l.served === null && l.status === 'unverified'));
    // An ignored version is not a request to index that version.
    const jobs = (await (await s.api('/api/jobs?kind=version-fetch&libraryId=/pinojs/pino')).json()) as { jobs: unknown[] };
    assert.equal(jobs.jobs.length, 0);
  });

  test('rule 8: a version missing from an imported library queues nothing; the answer says it is not indexed', async () => {
    const count = async (libraryId: string) =>
      ((await (await s.api(`/api/jobs?kind=version-fetch&libraryId=${libraryId}`)).json()) as { jobs: unknown[] }).jobs.length;
    for (const version of ['99', '5.1', 'v5.1']) {
      const { res, body } = await search({ query: 'dev server', library: 'vite', version });
      assert.equal(res.status, 200);
      assert.ok(libsOf(body).size > 0, 'the current documentation answers');
      // The spec's words for "no documentation indexed for the requested version; current documentation served".
      assert.deepEqual(body.version, {
        requested: version,
        status: 'unverified',
        libraries: [{ libraryId: '/vitejs/vite', requested: version, served: null, status: 'unverified' }],
      });
      assert.deepEqual(hdr(res), { status: 'partial', reason: 'versionUnverified', version: 'unverified' });
    }
    await search({ query: 'spin', library: 'gizmo site', version: '7' });
    await s.services.versions.settled();
    assert.equal(await count('/vitejs/vite'), 0, 'an imported library has no source to fetch a version from');
    assert.equal(await count('/acme/site'), 0, 'nor has a website');
    // The same through /api/v2/context.
    const ctx = await s.api('/api/v2/context?libraryId=/vitejs/vite/99&query=dev+server&type=json');
    assert.equal(ctx.status, 200);
    assert.equal(ctx.headers.get('x-stacks-search-reason'), 'versionUnverified');
    await s.services.versions.settled();
    assert.equal(await count('/vitejs/vite'), 0);
  });
});
