import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers/server.ts';
import { bundlePath, loadBundleFile } from './eval/bundles.ts';
import { textSources } from './eval/http.ts';
import { installedPackages, packageNameKeys, PackageList } from '../server/search/package-names.ts';

test('install commands give their packages, without versions or flags; a sentence after one is no package', () => {
  assert.deepEqual(installedPackages('npm i -D @tanstack/react-query@5 @tanstack/react-query-devtools'), [
    '@tanstack/react-query',
    '@tanstack/react-query-devtools',
  ]);
  assert.deepEqual(installedPackages('$ pnpm add pino-http\nyarn add --dev pino-pretty@^11.0.0\nbun add hono'), ['pino-http', 'pino-pretty', 'hono']);
  assert.deepEqual(installedPackages('# Copying this separately prevents re-running npm install on every code change.'), []);
  assert.deepEqual(installedPackages('npm run build && npm test'), []);
  const list = new PackageList();
  list.add('Install it with `npm i fastify-plugin`, then run npm install on every change.', 'info');
  assert.deepEqual(list.list(), ['fastify-plugin']);
});

test("a package is a library's name when its own name holds a word of the library's name and its scope is the library's", () => {
  const keys = (id: string, title: string, packages: string[]) => packageNameKeys({ id, title }, packages).map((k) => k.key);
  assert.deepEqual(keys('/tanstack/query', 'TanStack Query', ['@tanstack/react-query', '@tanstack/react-router', '@testing-library/react-hooks']), [
    'reactquery',
  ]);
  assert.deepEqual(keys('/pinojs/pino', 'Pino', ['pino', 'pino-http', '@hono/structured-logger']), ['pinohttp']);
  // Another publisher's package is not the library's name, nor a single-word package it installs.
  assert.deepEqual(keys('/colinhacks/zod', 'Zod', ['@hono/zod-validator', 'zod']), []);
  assert.deepEqual(keys('/honojs/website', 'Hono', ['zod', '@hono/node-server', 'hono-openapi']), ['honoopenapi']);
  assert.equal(packageNameKeys({ id: '/tanstack/query', title: 'TanStack Query' }, ['@tanstack/react-query'])[0]!.fuzzy, false);
});

test('a question naming a library by a package its documents install ("react query") is answered from that library once its model is learned', async () => {
  const s = await startTestServer({ config: { learnRanking: true } });
  try {
    await loadBundleFile(s.services.writer, bundlePath('hono'));
    await loadBundleFile(s.services.writer, bundlePath('tanstack-query'));
    await s.services.jobs.idle();
    const ask = async (query: string) => {
      const res = await s.api(`/api/v3/search?${new URLSearchParams({ query, type: 'txt' })}`, { auth: null });
      assert.equal(res.status, 200);
      return [...(await res.text()).matchAll(/^Library: (\S+)/gm)].map((m) => m[1]);
    };
    // Hono's documents hold "react" and "query" too; only the package name ties the words to TanStack Query.
    for (const q of ['getting started with react query', 'install react-query']) assert.deepEqual([...new Set(await ask(q))], ['/tanstack/query'], q);
    // A library value resolves by the package name too.
    const valued = await s.api(`/api/v3/search?${new URLSearchParams({ library: 'react-query', query: 'invalidate after a mutation', type: 'txt' })}`, {
      auth: null,
    });
    assert.deepEqual([...new Set([...(await valued.text()).matchAll(/^Library: (\S+)/gm)].map((m) => m[1]))], ['/tanstack/query']);
    const lookup = await s.api(`/api/v2/libs/search?${new URLSearchParams({ libraryName: 'react-query', query: 'data fetching' })}`, { auth: null });
    assert.equal(((await lookup.json()) as { results: { id: string }[] }).results[0]!.id, '/tanstack/query');
    const overview = await s.api(`/api/v3/search?${new URLSearchParams({ query: 'what is react query', type: 'txt' })}`, { auth: null });
    assert.match(textSources(await overview.text())[0]!, /\/docs\/framework\/react\/overview/);
  } finally {
    await s.close();
  }
});
