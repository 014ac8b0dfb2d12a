import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editDistance, MentionIndex, namesOf } from '../server/search/names.ts';
import type { Library } from '../lib/model.ts';
import { rng } from './helpers/rng.ts';

/** The textbook table form of the optimal string alignment distance, uncapped. */
function reference(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

test('editDistance (reused rows, early exit) equals the table form, capped', () => {
  const r = rng(5);
  const word = (n: number) => Array.from({ length: n }, () => 'abcde'[Math.floor(r() * 5)]).join('');
  const pairs: [string, string][] = [
    ['fastify', 'fastfiy'],
    ['fastify', 'fsatify'],
    ['nextjs', 'next'],
    ['', 'ab'],
    ['vue', 'vue'],
    ['a'.repeat(90), 'a'.repeat(89) + 'b'],
  ];
  for (let i = 0; i < 3000; i++) {
    const a = word(Math.floor(r() * 9));
    // Mostly near variants of a (the case the cap is for), some unrelated words.
    const b = r() < 0.7 ? [...a].map((c) => (r() < 0.2 ? 'abcde'[Math.floor(r() * 5)] : c)).join('') + (r() < 0.3 ? 'e' : '') : word(Math.floor(r() * 9));
    pairs.push([a, b]);
  }
  for (const [a, b] of pairs) {
    for (const cap of [1, 2, 3]) {
      const exact = reference(a, b);
      assert.equal(editDistance(a, b, cap), exact <= cap ? exact : cap + 1, `${a} / ${b}, cap ${cap}`);
    }
  }
});

test('an npm package scope names the library its owner publishes; the owner in prose does not', () => {
  const query = {
    id: '/tanstack/query',
    title: 'TanStack Query',
    docsRepoUrl: null,
    sourceUrl: 'https://github.com/TanStack/query',
    docsSiteUrl: 'https://tanstack.com/query/latest',
  } as unknown as Library;
  const index = new MentionIndex([{ item: 'query', keys: namesOf(query) }]);
  const found = index.find("import { useQuery } from '@tanstack/react-query'\n\nHow do I refetch after a mutation?");
  assert.match(found.get('query')!.reason, /@tanstack scope/);
  assert.equal(index.find('a tanstack engineer wrote about caching').size, 0);
  assert.equal(index.find('a library like @types/node').size, 0);
});

test('a node_modules path in a pasted stack frame names its library', () => {
  const hono = {
    id: '/honojs/website',
    title: 'Hono',
    docsRepoUrl: null,
    sourceUrl: 'https://github.com/honojs/website',
    docsSiteUrl: 'https://hono.dev',
  } as unknown as Library;
  const index = new MentionIndex([{ item: 'hono', keys: namesOf(hono) }]);
  assert.ok(index.find('TypeError: c.req.valid is not a function\n    at dispatch (/srv/app/node_modules/hono/dist/compose.js:22:23)').has('hono'));
});

test("a crawled site's title names its product without the words around it: the name a person types finds it", () => {
  const site = {
    id: '/websites/127-0-0-1-8080-static',
    title: 'The Complete StrictPath Guide',
    docsSiteUrl: 'http://127.0.0.1:8080/static/',
    sourceUrl: null,
    docsRepoUrl: null,
  } as unknown as Library;
  const keys = namesOf(site).map((k) => k.key);
  assert.ok(keys.includes('strictpath'), keys.join(' '));
  assert.ok(keys.includes('thecompletestrictpathguide'));
  // A title that is the name already gains nothing; one made only of filler gives no name.
  assert.deepEqual(
    namesOf({ ...site, title: 'Fastify' })
      .map((k) => k.key)
      .filter((k) => k.startsWith('fast')),
    ['fastify'],
  );
  assert.ok(!namesOf({ ...site, title: 'The Documentation' }).some((k) => k.key === ''));
});
