// Sitemap reading (crawler/sitemap.ts over fast-xml-parser): pure unit tests, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { MAX_SITEMAP_ENTRIES, parseSitemap } from '../crawler/sitemap.ts';

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

test('sitemap: urlset entries in order, whitespace around <loc> trimmed, other fields ignored', () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${NS}>\n  <url>\n    <loc>\n      http://h/docs/a.html\n    </loc>\n    <lastmod>2026-04-22</lastmod>\n    <priority>0.8</priority>\n  </url>\n  <url><loc>http://h/docs/b.html</loc></url>\n  <url><lastmod>2026-01-01</lastmod></url>\n  <url><loc>  </loc></url>\n</urlset>\n`;
  assert.deepEqual(parseSitemap(xml), { urls: ['http://h/docs/a.html', 'http://h/docs/b.html'], sitemaps: [], warning: null });
  assert.deepEqual(parseSitemap(`<urlset ${NS}><url><loc>http://h/only</loc></url></urlset>`).urls, ['http://h/only'], 'a single entry');
  assert.deepEqual(parseSitemap(`<urlset ${NS}/>`), { urls: [], sitemaps: [], warning: null }, 'an empty urlset');
  assert.deepEqual(parseSitemap('<URLSET><URL><LOC>http://h/upper</LOC></URL></URLSET>').urls, ['http://h/upper'], 'element names in any case');
});

test('sitemap: sitemap index children; a urlset never yields nested sitemaps nor an index page URLs', () => {
  const index = `<sitemapindex ${NS}><sitemap><loc>http://h/a.xml</loc><lastmod>2026-01-01</lastmod></sitemap><sitemap><loc>http://h/b.xml</loc></sitemap></sitemapindex>`;
  assert.deepEqual(parseSitemap(index), { urls: [], sitemaps: ['http://h/a.xml', 'http://h/b.xml'], warning: null });
  const mixed = `<urlset ${NS}><url><loc>http://h/page</loc></url><sitemap><loc>http://h/x.xml</loc></sitemap></urlset>`;
  assert.deepEqual(parseSitemap(mixed), { urls: ['http://h/page'], sitemaps: [], warning: null });
});

test('sitemap: CDATA sections', () => {
  const xml = `<urlset ${NS}><url><loc><![CDATA[http://h/search?a=1&b=<2>]]></loc></url><url><loc>\n  <![CDATA[ http://h/spaced ]]>\n</loc></url></urlset>`;
  assert.deepEqual(parseSitemap(xml).urls, ['http://h/search?a=1&b=<2>', 'http://h/spaced']);
  const index = `<sitemapindex ${NS}><sitemap><loc><![CDATA[http://h/part-1.xml]]></loc></sitemap></sitemapindex>`;
  assert.deepEqual(parseSitemap(index).sitemaps, ['http://h/part-1.xml']);
  assert.deepEqual(
    parseSitemap(`<urlset ${NS}><url><loc><![CDATA[http://h/a?x=&amp;]]></loc></url></urlset>`).urls,
    ['http://h/a?x=&amp;'],
    'no entity decoding inside CDATA',
  );
});

test('sitemap: namespace prefixes on every element', () => {
  const xml =
    '<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>http://h/a</sm:loc></sm:url><sm:url><sm:loc>http://h/b</sm:loc></sm:url></sm:urlset>';
  assert.deepEqual(parseSitemap(xml), { urls: ['http://h/a', 'http://h/b'], sitemaps: [], warning: null });
  const index = '<s:sitemapindex xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><s:sitemap><s:loc>http://h/1.xml</s:loc></s:sitemap></s:sitemapindex>';
  assert.deepEqual(parseSitemap(index).sitemaps, ['http://h/1.xml']);
  // Extensions nest their own <loc> (image, video); only the entry's own <loc> is a page.
  const images = `<urlset ${NS} xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><loc>http://h/page</loc><image:image><image:loc>http://h/pic.png</image:loc></image:image></url></urlset>`;
  assert.deepEqual(parseSitemap(images).urls, ['http://h/page']);
});

test('sitemap: entities: the five XML ones, character references, declared ones', () => {
  const xml = `<urlset ${NS}><url><loc>http://h/a?x=1&amp;y=2&amp;z=&quot;&apos;&lt;&gt;</loc></url><url><loc>http://h/&#233;t&#xE9;?a=1&#38;b=2</loc></url></urlset>`;
  assert.deepEqual(parseSitemap(xml).urls, [`http://h/a?x=1&y=2&z="'<>`, 'http://h/été?a=1&b=2']);
  const declared = `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY site "http://h">]><urlset ${NS}><url><loc>&site;/a</loc></url></urlset>`;
  assert.deepEqual(parseSitemap(declared).urls, ['http://h/a']);
});

test('sitemap: comments, processing instructions and a byte order mark', () => {
  const xml = `\uFEFF<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?><!-- generated --><urlset ${NS}><!-- <url><loc>http://h/commented-out</loc></url> --><url><loc>http://h/a</loc></url></urlset>`;
  assert.deepEqual(parseSitemap(xml), { urls: ['http://h/a'], sitemaps: [], warning: null });
});

test('sitemap: malformed XML yields no URLs and a warning, never an exception', () => {
  const cases: Record<string, string> = {
    'mismatched tag': `<urlset ${NS}><url><loc>http://h/a</loc></url><url><loc>http://h/b</url></urlset>`,
    truncated: `<urlset ${NS}><url><loc>http://h/a</loc></url><url><loc>http://h/b`,
    'unclosed root': `<urlset ${NS}><url><loc>http://h/a</loc></url>`,
    'bare ampersand': `<urlset ${NS}><url><loc>http://h/a?x=1&y=2</loc></url></urlset>`,
    'two roots': `<urlset ${NS}><url><loc>http://h/a</loc></url></urlset><urlset></urlset>`,
    'broken index': `<sitemapindex ${NS}><sitemap><loc>http://h/a.xml</loc></sitemapindex>`,
  };
  for (const [name, xml] of Object.entries(cases)) {
    const r = parseSitemap(xml);
    assert.deepEqual([r.urls, r.sitemaps], [[], []], name);
    assert.match(r.warning ?? '', /^malformed XML at line \d+/, name);
  }
  const bomb = `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "${'a'.repeat(5000)}">]><urlset ${NS}><url><loc>${'&a;'.repeat(100)}</loc></url></urlset>`;
  const r = parseSitemap(bomb);
  assert.deepEqual(r.urls, [], 'entity expansion past the parser limits');
  assert.match(r.warning ?? '', /^unreadable XML/);
});

test('sitemap: documents that are no sitemap yield nothing and no warning', () => {
  const notSitemaps = [
    '<!doctype html><html><head><meta charset="utf-8"><title>Docs</title></head><body><p>Not found<br></body></html>',
    '<?xml version="1.0"?><rss version="2.0"><channel><item><link>http://h/post</link></item></channel></rss>',
    '',
    'User-agent: *\nDisallow: /',
    zlib.gzipSync(`<urlset ${NS}><url><loc>http://h/a</loc></url></urlset>`).toString('utf8'),
  ];
  for (const text of notSitemaps) assert.deepEqual(parseSitemap(text), { urls: [], sitemaps: [], warning: null }, JSON.stringify(text.slice(0, 40)));
});

test(`sitemap: at most ${MAX_SITEMAP_ENTRIES} entries per file`, () => {
  const entries = Array.from({ length: MAX_SITEMAP_ENTRIES + 5 }, (_, i) => `<url><loc>http://h/p${i}</loc></url>`).join('');
  const urls = parseSitemap(`<urlset ${NS}>${entries}</urlset>`).urls;
  assert.equal(urls.length, MAX_SITEMAP_ENTRIES);
  assert.equal(urls[urls.length - 1], `http://h/p${MAX_SITEMAP_ENTRIES - 1}`);
});
