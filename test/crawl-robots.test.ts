// robots.txt rules (crawler/robots.ts over robots-parser): pure unit tests, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Robots } from '../crawler/robots.ts';

test('robots.txt: our group by product token (any case, with a version), else `*`; other agents never apply', () => {
  const text = 'User-agent: *\nDisallow: /all-bots/\n\nUser-agent: StacksCrawler\nDisallow: /only-us/\n';
  const r = Robots.parse(text);
  assert.ok(!r.allows('/only-us/a'));
  assert.ok(r.allows('/all-bots/a'), 'a group of our own replaces the `*` group');
  assert.ok(!Robots.parse('User-agent: stackscrawler/2.1\nDisallow: /x\n').allows('/x'), 'case and version of the token do not matter');
  // The token is matched as a whole: a group for a bot whose name is part of ours is someone else's.
  const other = Robots.parse('User-agent: crawler\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n');
  assert.ok(other.allows('/docs/'));
  assert.ok(!other.allows('/private/a'));
  // Consecutive User-agent lines share one group; a later group for us adds to it.
  const shared = Robots.parse('User-agent: googlebot\nUser-agent: StacksCrawler\nDisallow: /a\n\nUser-agent: StacksCrawler\nDisallow: /b\n');
  assert.ok(!shared.allows('/a/1') && !shared.allows('/b/1') && shared.allows('/c'));
  assert.ok(Robots.parse('User-agent: googlebot\nDisallow: /\n').allows('/a'), 'no group for us and no `*`: everything allowed');
});

test('robots.txt: `$` anchors and `*` wildcards', () => {
  const r = Robots.parse('User-agent: *\nDisallow: /*.pdf$\nDisallow: /$\nDisallow: /*/print\nAllow: /guide$\nDisallow: /guide\n');
  assert.ok(!r.allows('/files/a.pdf'));
  assert.ok(r.allows('/files/a.pdf?download=1'), '$ anchors the end of path and query');
  assert.ok(r.allows('/files/a.pdfx'));
  assert.ok(!r.allows('/'), '`Disallow: /$` is the root only');
  assert.ok(r.allows('/index.html'));
  assert.ok(!r.allows('/docs/print.html'), '`*` spans folders');
  assert.ok(!r.allows('/a/b/print'));
  assert.ok(r.allows('/guide'), 'anchored Allow for exactly /guide');
  assert.ok(!r.allows('/guide/intro'));
  // `$` in the middle of a rule is an ordinary character.
  const mid = Robots.parse('User-agent: *\nDisallow: /a$b\n');
  assert.ok(!mid.allows('/a$b/c'));
  assert.ok(mid.allows('/ab'));
});

test('robots.txt: the longest matching rule wins, Allow on a tie, order does not matter', () => {
  const r = Robots.parse('User-agent: *\nAllow: /docs/public/\nDisallow: /docs/\nDisallow: /docs/public/drafts/\nAllow: /p\nDisallow: /p\n');
  assert.ok(!r.allows('/docs/secret.html'));
  assert.ok(r.allows('/docs/public/a.html'), 'longer Allow beats shorter Disallow');
  assert.ok(!r.allows('/docs/public/drafts/x'), 'longer Disallow beats shorter Allow');
  assert.ok(r.allows('/page'), 'same length: Allow');
  // Length counts the pattern as written, wildcards included.
  const w = Robots.parse('User-agent: *\nDisallow: /*/private/*\nAllow: /team/\n');
  assert.ok(!w.allows('/team/private/x'), '`/*/private/*` (12 characters) is longer than `/team/` (6)');
  assert.ok(w.allows('/team/public'));
});

test('robots.txt: empty Disallow, comments, CRLF, byte order mark, percent-encoding', () => {
  const empty = Robots.parse('User-agent: StacksCrawler\nDisallow:\n\nUser-agent: *\nDisallow: /\n');
  assert.ok(empty.allows('/anything'), 'an empty Disallow in our group allows everything');
  const crlf = Robots.parse('\uFEFFUser-agent: * # every bot\r\nDisallow: /tmp/ # scratch\r\n# Disallow: /docs/\r\n');
  assert.ok(!crlf.allows('/tmp/a'), 'a leading byte order mark does not hide the first line');
  assert.ok(crlf.allows('/docs/a'), 'comments are ignored');
  const enc = Robots.parse('User-agent: *\nDisallow: /café/\nDisallow: /a%2fb\n');
  assert.ok(!enc.allows('/caf%C3%A9/menu'), 'a rule in UTF-8 matches the percent-encoded path');
  assert.ok(!enc.allows('/a%2Fb'), 'percent-escapes compare without regard to case');
  assert.ok(Robots.parse('Disallow: /\n').allows('/a'), 'rules before any User-agent line belong to no group');
});

test('robots.txt: Sitemap lines anywhere, in order; allowAll', () => {
  const r = Robots.parse('Sitemap: http://h/one.xml\nUser-agent: *\nsitemap:   http://h/two.xml  \nDisallow: /x\nSitemap:\n');
  assert.deepEqual(r.sitemaps, ['http://h/one.xml', 'http://h/two.xml']);
  assert.ok(!r.allows('/x'), 'a Sitemap line does not end the group');
  const all = Robots.allowAll();
  assert.ok(all.allows('/') && all.allows('/anything?x=1'));
  assert.deepEqual(all.sitemaps, []);
  assert.ok(Robots.parse('').allows('/a'), 'an empty robots.txt allows everything');
  assert.ok(Robots.parse('<html><body>Not found</body></html>').allows('/a'), 'an HTML page served as robots.txt allows everything');
});
