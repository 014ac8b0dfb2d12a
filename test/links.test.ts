import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkKey, linksOf } from '../server/search/links.ts';

test('a link and a snippet address reduce to the same page and anchor', () => {
  const site = linkKey('https://fastify.dev/docs/latest/Reference/Server/#bodylimit');
  assert.deepEqual(site, { page: 'server', anchor: 'bodylimit' });
  // Repository-relative, root-relative and site paths, with or without an extension.
  assert.deepEqual(linkKey('./Server.md#bodylimit'), site);
  assert.deepEqual(linkKey('/docs/Reference/Server.mdx#bodyLimit'), site);
  assert.deepEqual(linkKey('../Reference/Server/#bodylimit'), site);
  // A repeated anchor's `~2` names the same section; a page link has no anchor.
  assert.deepEqual(linkKey('https://vitest.dev/config/sequence#sequence-shuffle~2'), { page: 'sequence', anchor: 'sequence-shuffle' });
  assert.deepEqual(linkKey('/config/sequence'), { page: 'sequence', anchor: '' });
  assert.equal(linkKey('https://'), null);
});

test('the links of a snippet: same-page anchors on its page, other sites left out', () => {
  const text = [
    'Raise [`bodyLimit`](./Server.md#bodylimit) for uploads, or see [levels](#log-levels).',
    'Read [MDN](https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Content-Length) and [the guide](https://fastify.dev/docs/latest/Guides/Getting-Started/).',
    'An image ![logo](/images/logo.png "Logo") names a file no section has.',
  ].join('\n');
  const links = linksOf(text, 'https://fastify.dev/docs/latest/Reference/Logging/#usage');
  assert.deepEqual(links.slice(0, 3), [
    { page: 'server', anchor: 'bodylimit' },
    { page: 'logging', anchor: 'log-levels' },
    { page: 'getting-started', anchor: '' },
  ]);
  assert.ok(!links.some((l) => l.page === 'content-length'), 'a link to another site names none of these pages');
});
