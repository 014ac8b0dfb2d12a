import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mayAskOverview, overviewText } from '../server/search/overview.ts';
import type { Library } from '../lib/model.ts';
import type { TestServer } from './helpers/server.ts';
import { serverWithBundles } from './eval/bundles.ts';
import { REAL_MODEL } from './helpers/server.ts';
import { textSources } from './eval/http.ts';

const query = {
  id: '/tanstack/query',
  title: 'TanStack Query',
  description: 'Powerful asynchronous state management for TS/JS',
  docsRepoUrl: null,
  sourceUrl: null,
  docsSiteUrl: 'https://tanstack.com/query',
} as unknown as Library;

test('a question that only names the library, with words asking what it is, is searched with its description', () => {
  for (const q of [
    'TanStack Query',
    'tanstack-query',
    'what is tanstack query?',
    "what's TanStack Query",
    'TanStack Query overview',
    'introduction to TanStack Query',
    'tanstack query docs',
    'query',
    'overview',
  ]) {
    assert.equal(overviewText(q, query), `${q}\nTanStack Query: Powerful asynchronous state management for TS/JS`, q);
  }
});

test('any other question is searched as asked', () => {
  for (const q of [
    'tanstack query devtools', // a topic
    'getting started with tanstack query', // how to begin: documents have sections of that name
    'install tanstack query',
    'what is react query', // "react" names no part of this library
    'what is the difference between tanstack query and swr', // another product
    `tanstack query ${'overview '.repeat(12)}`, // not a short question
  ]) {
    assert.equal(overviewText(q, query), null, q);
  }
  // Nothing to search with: no description.
  assert.equal(overviewText('TanStack Query', { ...query, description: ' ' }), null);
  // The cheap check before a library is known: a few words besides those asking what it is.
  assert.equal(mayAskOverview('what is hono'), true);
  assert.equal(mayAskOverview('how do I register a plugin with a prefix in fastify'), false);
});

let s: TestServer;

before(async () => {
  s = await serverWithBundles(['pino', 'zod', 'hono'], { config: REAL_MODEL });
});

after(async () => {
  await s?.close();
});

async function firstSources(path: string): Promise<string[]> {
  const res = await s.api(path, { auth: null });
  assert.equal(res.status, 200, path);
  return textSources(await res.text()).slice(0, 3);
}

test('over HTTP: "what is hono" and "what does zod do?" are answered from the libraries\' introductions', async () => {
  // Before: the presets page (`hono`, `hono/tiny`) and zod's changelog and API entries.
  const hono = await firstSources(`/api/v3/search?${new URLSearchParams({ query: 'what is hono', type: 'txt' })}`);
  assert.match(hono[0]!, /^https:\/\/hono\.dev\/docs\/#/, hono.join(' '));
  for (const path of [
    `/api/v3/search?${new URLSearchParams({ query: 'what does zod do?', library: 'zod', type: 'txt' })}`,
    `/api/v2/context?${new URLSearchParams({ query: 'what does zod do?', libraryId: '/colinhacks/zod', type: 'txt' })}`,
  ]) {
    const zod = await firstSources(path);
    assert.match(zod[0]!, /^https:\/\/zod\.dev\/(#|$)/, `${path}: ${zod.join(' ')}`);
  }
});
