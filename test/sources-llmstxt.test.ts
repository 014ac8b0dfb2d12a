import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { FIXTURES, listen, startFixtureServer, type FixtureServer } from './helpers/fixtures.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { waitJob, snippetsOf, stagingEntries, postJson } from './helpers/sources.ts';
import { parseLlmsTxt } from '../server/sources/llmstxt.ts';

let s: TestServer;
let fixtures: FixtureServer;
let docs: FixtureServer;
let docsUrl = '';
const hits: string[] = [];

const spa = (name: string) => fs.readFileSync(path.join(FIXTURES, 'sites/spa-docs/content', name), 'utf8');

/**
 * A docs host on 127.0.0.1 serving the real llms.txt fixtures with their absolute links rewritten to
 * this host (so following links never leaves the machine), plus a few linked documents.
 */
before(async () => {
  fixtures = await startFixtureServer();
  docs = await listen(
    http.createServer((req, res) => {
      const p = new URL(req.url ?? '/', 'http://x').pathname;
      hits.push(p);
      const send = (status: number, type: string, body: string | Buffer) => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      if (p === '/pagy/llms.txt') {
        const text = fs.readFileSync(path.join(FIXTURES, 'llmstxt/pagy.llms.txt'), 'utf8').replaceAll('https://ddnexus.github.io/pagy', `${docsUrl}/pagy`);
        return send(
          200,
          'text/plain; charset=utf-8',
          `${text}\n## Extra\n\n- [Metadata](http://169.254.169.254/latest/meta-data/): must not be fetched\n- [HTML page](${docsUrl}/page.html): an HTML page\n- [Huge](${docsUrl}/huge.md): too large\n`,
        );
      }
      if (p === '/pydeprecate/llms.txt')
        return send(
          200,
          'text/plain',
          fs
            .readFileSync(path.join(FIXTURES, 'llmstxt/pydeprecate.llms.txt'), 'utf8')
            .replaceAll('https://borda.github.io/pyDeprecate', `${docsUrl}/pydeprecate`),
        );
      if (p === '/pagy/guides/quick-start.md') return send(200, 'text/markdown', spa('quick-start.md'));
      if (p === '/pagy/toolbox/paginators.md') return send(200, 'text/markdown', spa('7-retry.md'));
      if (p === '/page.html')
        return send(
          200,
          'text/html',
          '<!doctype html><html><head><title>x</title></head><body><nav>menu</nav><main><h1>Keyset pagination</h1><p>Use the keyset paginator for large tables that are ordered by a unique key.</p><pre><code class="language-ruby">@pagy, @records = pagy(:keyset, Product.order(:id))</code></pre></main></body></html>',
        );
      if (p === '/huge.md') return send(200, 'text/markdown', Buffer.alloc(6 * 1024 * 1024, 97));
      if (p === '/many/llms.txt') {
        const lines = ['# Many links', '', '> Generated', '', '## Pages', ''];
        for (let i = 0; i < 205; i++) lines.push(`- [Page ${i}](${docsUrl}/many/p${i}.md): page ${i}`);
        return send(200, 'text/plain', lines.join('\n'));
      }
      if (/^\/many\/p\d+\.md$/.test(p))
        return send(200, 'text/markdown', `# ${p}\n\nSome text about ${p} that is long enough to be kept as an info snippet.\n`);
      if (p === '/empty/llms.txt') return send(200, 'text/plain', '   \n');
      if (p === '/site/index.html') return send(200, 'text/html', '<!DOCTYPE html><html><body>hi</body></html>');
      send(404, 'text/plain', 'not found');
    }),
  );
  docsUrl = docs.url;
  s = await startTestServer();
});

after(async () => {
  await Promise.all([s?.close(), docs?.close(), fixtures?.close()]);
});

test('parsing reads long runs of spaces in headings and link lines once, with the result it gave on short runs', () => {
  const sp = ' '.repeat(50_000);
  const doc = parseLlmsTxt(
    `# Title${sp}#${sp}\n\n## Section${sp}b\n\n- [Page](https://x.test/p):${sp}\n- [Other](https://x.test/o):${sp}the other${sp}\n`,
    'https://x.test/',
  );
  assert.equal(doc.title, 'Title');
  assert.deepEqual(
    doc.links.map((l) => [l.title, l.url, l.description, l.section]),
    [
      ['Page', 'https://x.test/p', '', ['Section b']],
      ['Other', 'https://x.test/o', 'the other', ['Section b']],
    ],
  );
});

test('llms-full.txt: inline content becomes code snippets (language from the fence) and prose with heading breadcrumbs', async () => {
  const r = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${fixtures.url}/files/llmstxt/pydeprecate.llms-full.txt` });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.match(r.body.libraryName as string, /^\/llmstxt\/127_0_0_1_\d+-files-llmstxt-pydeprecate\.llms-full\.txt$/);
  const job = await waitJob(s, r.body.jobId as number);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  assert.equal(job.progress.links, 0, 'llms-full.txt links are not followed');
  const snippets = await snippetsOf(s, r.body.libraryName as string);
  const code = snippets.filter((x) => x.kind === 'code');
  assert.equal(code.length, 11);
  assert.deepEqual([...new Set(code.map((c) => c.language))].sort(), ['bash', 'python']);
  const lib = s.services.store.libraries.get(r.body.libraryName as string)!;
  assert.equal(lib.title, 'pyDeprecate Full Agent Context');
  assert.equal(lib.sourceType, 'llmstxt');
  const info = snippets.filter((x) => x.kind === 'info');
  assert.ok(info.length >= 7);
  assert.ok(
    info.some((i) => i.breadcrumb === 'pyDeprecate Full Agent Context > Public API Map' && i.content.includes('| Need | API |')),
    'tables stay whole',
  );
  assert.ok(code.some((c) => c.breadcrumb.startsWith('pyDeprecate Full Agent Context > Canonical Recipes > ')));
});

test('llms.txt link index: BOM, title, summary, sections; linked markdown and HTML are indexed, failures reported, SSRF guarded', async () => {
  hits.length = 0;
  const r = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${docsUrl}/pagy/llms.txt` });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.match(r.body.message as string, /44 linked documents/);
  const job = await waitJob(s, r.body.jobId as number);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  const lib = s.services.store.libraries.get(r.body.libraryName as string)!;
  assert.equal(lib.title, '💚 Pagy', 'BOM stripped, H1 is the title');
  assert.match(lib.description, /^Gem Version Supported Rubies/, 'the > line is the summary');
  const snippets = await snippetsOf(s, r.body.libraryName as string);
  const entries = snippets.filter((x) => x.kind === 'info' && /^\[.*\]\(http/.test(x.content));
  assert.equal(entries.length, 44, '41 fixture links + 3 added');
  assert.ok(
    entries.some((e) => e.breadcrumb === '💚 Pagy > Toolbox > ✳ Paginators > :keyset'),
    'H2 > H3 section path',
  );
  assert.ok(entries.some((e) => e.breadcrumb === '💚 Pagy > Guides > Quick Start' && e.content.includes('Check the Migration Guide first')));
  // quick-start.md has 12 js blocks, 7-retry.md 2 js + 3 ts, the HTML page 1 ruby block.
  const code = snippets.filter((x) => x.kind === 'code');
  assert.equal(code.filter((c) => c.sourceId.startsWith(`${docsUrl}/pagy/guides/quick-start.md`)).length, 12);
  assert.equal(code.filter((c) => c.sourceId.startsWith(`${docsUrl}/pagy/toolbox/paginators.md`)).length, 5);
  const ruby = code.find((c) => c.language === 'ruby')!;
  assert.match(ruby.codeList[0]!.code, /pagy\(:keyset/);
  assert.equal(ruby.breadcrumb, '💚 Pagy > Extra > HTML page > Keyset pagination');
  assert.ok(!snippets.some((x) => x.content.includes('menu')), 'HTML outside <main> is not indexed');
  const errors = job.progress.errors as { url: string; error: string }[];
  assert.equal(job.progress.linksFetched, 3);
  assert.equal(job.progress.linksFailed, 41);
  assert.match(errors.find((e) => e.url.startsWith('http://169.254.169.254'))!.error, /not allowed/);
  assert.match(errors.find((e) => e.url.endsWith('/huge.md'))!.error, /larger than/);
  assert.match(errors.find((e) => e.url.endsWith('/pagy/changelog.md'))!.error, /HTTP 404/);
  assert.ok(!hits.includes('/latest/meta-data/'));
  assert.deepEqual(stagingEntries(s), []);
});

test('llms.txt that carries content: its own code blocks and prose are indexed too', async () => {
  const r = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${docsUrl}/pydeprecate/llms.txt` });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const job = await waitJob(s, r.body.jobId as number);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  const snippets = await snippetsOf(s, r.body.libraryName as string);
  const own = snippets.filter((x) => x.kind === 'code' && x.sourceId.startsWith(`${docsUrl}/pydeprecate/llms.txt`));
  assert.equal(own.length, 10);
  assert.equal(s.services.store.libraries.get(r.body.libraryName as string)!.title, 'pyDeprecate');
});

test('link limit: at most 200 linked documents are fetched, the rest reported as skipped', async () => {
  const r = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${docsUrl}/many/llms.txt` });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const job = await waitJob(s, r.body.jobId as number, 90_000);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  assert.equal(job.progress.links, 200);
  assert.equal(job.progress.linksFetched, 200);
  assert.equal(job.progress.linksSkipped, 5);
});

test('errors come back synchronously: not found, HTML, empty, duplicate; nothing is left behind', async () => {
  const libs = s.services.store.libraries.list().length;
  const jobs = (await s.services.jobs.list()).length;
  const missing = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${docsUrl}/nope/llms.txt` });
  assert.equal(missing.status, 422);
  assert.match(missing.body.message as string, /HTTP 404/);
  const html = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${docsUrl}/site/index.html` });
  assert.equal(html.status, 400);
  assert.match(html.body.message as string, /HTML page, not an llms\.txt/);
  const empty = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${docsUrl}/empty/llms.txt` });
  assert.equal(empty.status, 400);
  const bad = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: 'ftp://example.com/llms.txt' });
  assert.equal(bad.status, 400);
  const none = await postJson(s, '/api/v2/add/llmstxt', {});
  assert.equal(none.status, 400);
  assert.match(none.body.message as string, /llmstxtUrl is required/);
  assert.equal(s.services.store.libraries.list().length, libs);
  assert.equal((await s.services.jobs.list()).length, jobs);
  const dup = await postJson(s, '/api/v2/add/llmstxt', { llmstxtUrl: `${fixtures.url}/files/llmstxt/pydeprecate.llms-full.txt` });
  assert.equal(dup.status, 409);
  assert.match(dup.body.message as string, /already exists/);
  assert.deepEqual(stagingEntries(s), []);
});
