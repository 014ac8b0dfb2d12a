// Exclude patterns of a crawl (crawler/url.ts over picomatch): pure unit tests, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inScope, patternToRegExp, scopeFor } from '../crawler/url.ts';

/** Whether the pattern skips the URL path (with query). */
const skips = (pattern: string, target: string) => patternToRegExp(pattern).test(target);

test('exclude: a pattern matches anywhere in the path, ignoring case; `*` spans folders', () => {
  assert.ok(skips('/blog/', '/blog/post'));
  assert.ok(skips('/blog/', '/docs/blog/post'), 'anywhere, not only at the start');
  assert.ok(!skips('/blog/', '/blogroll'));
  assert.ok(skips('/BLOG/', '/blog/x'));
  assert.ok(skips('*.pdf', '/docs/manual.pdf'));
  assert.ok(skips('/api/*.html', '/api/v1/users/get.html'), '`*` crosses `/`');
  assert.ok(!skips('/api/*.html', '/api/index.md'));
  assert.ok(skips('/best_practices/*', '/static/best_practices/a/b.html'));
  assert.ok(skips('/docs/a.*', '/docs/a.html'));
  assert.ok(!skips('/docs/a.*', '/docs/ab.html'), '`.` is a dot');
  assert.ok(skips('/.well-known/', '/.well-known/security.txt'), 'dot folders are ordinary');
});

test('exclude: the query is part of what is matched', () => {
  assert.ok(skips('?print=1', '/guide?print=1'));
  assert.ok(skips('*print=*', '/guide?lang=en&print=1'));
  assert.ok(!skips('*print=*', '/guide/print'));
});

test('exclude: glob features: `?`, classes, alternatives, `**`, escapes', () => {
  assert.ok(skips('/v?/api', '/v2/api'));
  assert.ok(!skips('/v?/api', '/v10/api'), '`?` is one character');
  assert.ok(!skips('/a?b', '/a/b'), '`?` is never `/`');
  assert.ok(skips('/release-[0-9]*', '/release-3.1/notes'));
  assert.ok(!skips('/release-[0-9]*', '/release-notes'));
  assert.ok(skips('{/blog/,/news/}', '/news/2026'));
  assert.ok(skips('/changelog/{v1,v2}/*', '/changelog/v2/x'));
  assert.ok(skips('/a/**/b', '/a/b'), '`**` may stand for no folder');
  assert.ok(skips('/a/**/b', '/a/x/y/b'));
  assert.ok(skips('/files/\\*', '/files/*'), 'an escaped star is a star');
  assert.ok(!skips('/files/\\*', '/files/a'));
});

test('exclude: `!`, parentheses, `|` and `+` are ordinary characters', () => {
  assert.ok(skips('!draft', '/notes/!draft'));
  assert.ok(!skips('!draft', '/notes/final'), 'a leading `!` does not negate (that would skip everything else)');
  assert.ok(skips('/wiki/Foo_(bar)', '/wiki/Foo_(bar)'));
  assert.ok(!skips('/wiki/Foo_(bar)', '/wiki/Foo_bar'));
  assert.ok(skips('/a|b', '/a|b'));
  assert.ok(!skips('/a|b', '/b'), '`|` is no alternation');
  assert.ok(skips('/c++/intro', '/lang/c++/intro'));
  assert.ok(skips('/x+(y)', '/x+(y)'), 'no extglobs');
  assert.ok(!skips('a\\d', '/a1'), 'a backslash before a letter is no regular-expression class');
  assert.ok(skips('a\\d', '/ad'));
});

test('exclude: `/regex/` patterns are regular expressions; invalid patterns throw', () => {
  assert.ok(skips('/\\/v\\d+\\//', '/docs/v12/api'));
  assert.ok(!skips('/\\/v\\d+\\//', '/docs/vx/api'));
  assert.ok(skips('/^\\/docs\\/old/', '/docs/old/a'));
  assert.ok(!skips('/^\\/docs\\/old/', '/x/docs/old/a'), 'anchors work');
  assert.ok(skips('/\\/DRAFT\\b/i', '/notes/draft/1'), 'flags after the closing slash');
  assert.ok(skips('/blog/', '/x/blog/y'), 'slashes without a regular-expression character: a path, not a regex');
  // The same rule (unchanged, so stored patterns keep their meaning) makes a glob between slashes
  // with `?`, `[`, `{` or `+` a regular expression.
  assert.ok(skips('/v?/', '/docs/intro'), '`/v?/` is the regex v?, which matches everywhere');
  assert.ok(!skips('/changelog/{v1,v2}/', '/changelog/v2/x'), 'the regex {v1,v2} is literal text');
  assert.throws(() => patternToRegExp('/c++/'), '`/c++/` is an invalid regex');
  assert.throws(() => patternToRegExp('/(unclosed/'));
  assert.throws(() => patternToRegExp('/docs/{a'), 'an unbalanced brace');
  assert.throws(() => patternToRegExp('/docs\\'), 'a trailing backslash');
});

test('exclude: scope applies patterns to the path and query of in-scope URLs', () => {
  const s = scopeFor('http://h/docs/', ['/docs/blog/', '*.pdf', '/\\/v\\d+\\//', '?print=*']);
  assert.ok(inScope('http://h/docs/guide', s));
  assert.ok(!inScope('http://h/docs/blog/post', s));
  assert.ok(!inScope('http://h/docs/MANUAL.PDF', s));
  assert.ok(!inScope('http://h/docs/v2/api', s));
  assert.ok(!inScope('http://h/docs/guide?print=1', s));
  assert.ok(inScope('http://h/docs/guide?lang=en', s));
  assert.deepEqual(scopeFor('http://h/docs/').exclude, []);
});
