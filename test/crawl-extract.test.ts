import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './helpers/fixtures.ts';
import { canonicalKey, inScope, libraryIdFor, scopeFor } from '../crawler/url.ts';
import { Robots } from '../crawler/robots.ts';
import { parseSitemap } from '../crawler/sitemap.ts';
import { extractPage } from '../crawler/extract/index.ts';
import { guessLanguage, languageFromClass, languageFromFence } from '../lib/text/code-language.ts';
import { htmlToMarkdown } from '../lib/text/html-markdown.ts';

test('canonical URLs: fragments, index.html, trailing slashes, tracking parameters, query order', () => {
  const k = (u: string) => canonicalKey(u);
  assert.equal(k('http://Docs.Example.com:80/guide/index.html#intro'), 'http://docs.example.com/guide');
  assert.equal(k('http://docs.example.com/guide/'), 'http://docs.example.com/guide');
  assert.equal(k('http://docs.example.com/guide?utm_source=x&b=2&a=1&fbclid=z'), 'http://docs.example.com/guide?a=1&b=2');
  assert.equal(k('http://docs.example.com/'), 'http://docs.example.com/');
  assert.equal(k('mailto:someone@example.com'), null);
  assert.equal(canonicalKey('../other.html', 'http://h/docs/a/b.html'), 'http://h/docs/other.html');
});

test('scope: origin and folder of the start URL, exclude patterns', () => {
  const s = scopeFor('http://h/docs/intro.html', ['/docs/blog/', '*.pdf', '/\\/v\\d+\\//']);
  assert.ok(inScope('http://h/docs/guide', s));
  assert.ok(inScope('http://h/docs', s));
  assert.ok(!inScope('http://h/docsearch', s), 'a prefix is a folder, not a string prefix');
  assert.ok(!inScope('http://h/other', s));
  assert.ok(!inScope('https://h/docs/guide', s), 'other scheme = other origin');
  assert.ok(!inScope('http://h/docs/blog/post', s));
  assert.ok(!inScope('http://h/docs/manual.pdf', s));
  assert.ok(!inScope('http://h/docs/v2/api', s), '/regex/ pattern');
  assert.equal(scopeFor('http://h/docs').prefix, '/docs');
  assert.equal(scopeFor('http://h/').prefix, '');
  assert.equal(libraryIdFor('https://www.Docs.example.com/Guide/index.html'), '/websites/docs-example-com-guide');
  assert.equal(libraryIdFor('http://127.0.0.1:4173/static/'), '/websites/127-0-0-1-4173-static');
});

test('robots.txt groups, longest match, wildcards; sitemap and sitemap index', () => {
  const r = Robots.parse(
    'User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nAllow: /private/ok.html\nDisallow: /*.pdf$\nSitemap: http://h/sitemap.xml\n',
  );
  assert.ok(r.allows('/docs/a.html'));
  assert.ok(!r.allows('/private/x.html'));
  assert.ok(r.allows('/private/ok.html'));
  assert.ok(!r.allows('/files/a.pdf'));
  assert.ok(r.allows('/files/a.pdf?download=1'));
  assert.deepEqual(r.sitemaps, ['http://h/sitemap.xml']);
  assert.ok(!Robots.parse('User-agent: StacksCrawler\nDisallow: /\n').allows('/a'));
  const fixture = fs.readFileSync(path.join(FIXTURES, 'sites/static-docs/sitemap.xml'), 'utf8');
  assert.equal(parseSitemap(fixture).urls.length, 46);
  assert.deepEqual(parseSitemap('<sitemapindex><sitemap><loc>http://h/a.xml</loc></sitemap></sitemapindex>').sitemaps, ['http://h/a.xml']);
});

test('code languages: first class token, aliases, guesses', () => {
  assert.equal(languageFromClass('language-rust no_run'), 'rust');
  assert.equal(languageFromClass('hljs language-js'), 'javascript');
  assert.equal(languageFromClass('playground'), null);
  assert.equal(guessLanguage('$ npm install got'), 'bash');
  assert.equal(guessLanguage('{"a": 1}'), 'json');
  assert.equal(guessLanguage('fn main() {\n    let mut x = 1;\n}'), 'rust');
  assert.equal(guessLanguage('const x = await got(url);'), 'javascript');
  assert.equal(guessLanguage('[package]\nname = "x"'), 'toml');
  // Fence info strings share the alias table with classes.
  assert.equal(languageFromFence('{.python}'), 'python');
  assert.equal(languageFromFence('js title="x"'), 'javascript');
  assert.equal(languageFromFence('rust,no_run'), 'rust');
  assert.equal(languageFromFence(''), null);
  // Shapes only one of the two former guessers knew.
  assert.equal(guessLanguage("import got from 'got';\n\nexport default got.extend({});"), 'javascript', '`export default` is not a shell export');
  assert.equal(guessLanguage('from x import y\n# a comment;\ndef f(a: int) -> int:\n    return a'), 'python');
  assert.equal(guessLanguage('let p = root.strict_join("a")?;'), 'rust');
  assert.equal(guessLanguage('type: string\nformat: date\nitems:\n  - a'), 'yaml');
  assert.equal(guessLanguage('<?xml version="1.0"?>\n<a/>'), 'xml');
  assert.equal(guessLanguage('Just some words.'), 'text');
});

test('code language guesses read long runs once (the Python class and CSS rule patterns backtracked over them)', () => {
  const n = 50_000;
  assert.equal(guessLanguage(`class a${'a'.repeat(n)}`), 'text');
  assert.equal(guessLanguage(`class A${'a'.repeat(n)}:`), 'python');
  assert.equal(guessLanguage(`a {${':'.repeat(n)}`), 'text');
  assert.equal(guessLanguage(`a {${':'.repeat(n)}}`), 'css');
});

test('HTML -> markdown: absolute links, in-page anchors as text, no escaping, fenced code with a language, pipe tables', () => {
  const md = htmlToMarkdown(
    '<p>See <a href="#setup">Setup</a> and <a href="../api.html">the API</a>: <em>before_request</em><img src="data:image/png;base64,AAAA" alt="x"></p>' +
      '<pre class="language-py"><code>import os<br>print(os.sep)</code></pre><pre><code>$ npm i got</code></pre>' +
      '<table><tr><th>Option</th><th>Default</th></tr><tr><td><code>timeout</code></td><td>30 | 60</td></tr></table>',
    { baseUrl: 'http://h/docs/guide/intro.html' },
  );
  assert.equal(
    md,
    'See Setup and [the API](http://h/docs/api.html): *before_request*\n\n```python\nimport os\nprint(os.sep)\n```\n\n```bash\n$ npm i got\n```\n\n| Option | Default |\n| --- | --- |\n| `timeout` | 30 \\| 60 |',
  );
});

test('extraction: main content without chrome, soft 404, noindex, site name, breadcrumbs', () => {
  const html = `<!doctype html><html><head><title>Install - Widget Docs</title></head><body>
<header><a href="/">Widget</a></header><nav><a href="/docs/a">A</a></nav>
<div id="cookie-banner">We use cookies. Accept all cookies?</div>
<main><h1 id="install">Install</h1><p>Widget installs with one command on every platform we support.</p>
<h2 id="npm">With npm</h2><p>Use the npm client for Node projects:</p><pre><code class="language-sh">npm install widget</code></pre>
<h3 id="pin">Pinning</h3><p>Pin the major version in production so that upgrades are deliberate.</p></main>
<footer>Copyright Widget Inc.</footer></body></html>`;
  const page = extractPage(html, 'http://h/docs/install');
  assert.equal(page.pageTitle, 'Install');
  assert.equal(page.siteName, 'Widget Docs');
  assert.ok(page.links.includes('http://h/docs/a'), 'navigation links are followed even though nav is not indexed');
  const code = page.snippets.filter((s) => s.kind === 'code');
  assert.equal(code.length, 1);
  assert.deepEqual(
    { ...code[0], tokens: undefined },
    {
      kind: 'code',
      sourceId: 'http://h/docs/install#npm',
      title: 'With npm',
      description: 'Use the npm client for Node projects:',
      language: 'bash',
      pageTitle: 'Install',
      breadcrumb: 'Install > With npm',
      codeList: [{ language: 'bash', code: 'npm install widget' }],
      tokens: undefined,
    },
  );
  const info = page.snippets.filter((s) => s.kind === 'info');
  assert.deepEqual(
    info.map((s) => s.breadcrumb),
    ['Install', 'Install > With npm > Pinning'],
  );
  const all = JSON.stringify(page.snippets);
  assert.ok(!/cookies|Copyright|Widget<\/a>/.test(all));

  const table = extractPage(
    '<html><head><title>Options - W</title></head><body><main><h1>Options</h1><p>Every option of the client, with defaults.</p><table><tr><th>Name</th><th>Default</th></tr><tr><td><code>timeout</code></td><td>30 | 60</td></tr></table></main></body></html>',
    'http://h/o',
  );
  assert.match(table.snippets[0]!.kind === 'info' ? table.snippets[0]!.content : '', /\| Name \| Default \|\n\| --- \| --- \|\n\| `timeout` \| 30 \\\| 60 \|/);

  const soft = extractPage(
    '<html><head><title>Docs</title><script src="a.js"></script></head><body><main><h1>Page not found</h1><p>Nothing lives at this address, sorry about that.</p></main></body></html>',
    'http://h/x',
  );
  assert.ok(soft.softNotFound);
  assert.equal(soft.snippets.length, 0);
  const noindex = extractPage(
    '<html><head><meta name="robots" content="noindex"></head><body><main><h1>T</h1><p>Some long enough paragraph of text here.</p><a href="/y">y</a></main></body></html>',
    'http://h/x',
  );
  assert.ok(noindex.noindex);
  assert.equal(noindex.snippets.length, 0);
  assert.deepEqual(noindex.links, ['http://h/y']);
  const shell = extractPage(fs.readFileSync(path.join(FIXTURES, 'sites/spa-docs/index.html'), 'utf8'), 'http://h/spa/');
  assert.ok(shell.wantsBrowser, 'the SPA shell is sent to the browser');
  const mdbook = extractPage(fs.readFileSync(path.join(FIXTURES, 'sites/static-docs/getting_started.html'), 'utf8'), 'http://h/static/getting_started.html');
  assert.ok(!mdbook.wantsBrowser, 'server-rendered pages stay on the HTTP path');
  const index = extractPage(fs.readFileSync(path.join(FIXTURES, 'sites/static-docs/index.html'), 'utf8'), 'http://h/static/');
  assert.equal(index.contentHash, mdbook.contentHash, 'mdBook copies the first chapter to index.html');
});
