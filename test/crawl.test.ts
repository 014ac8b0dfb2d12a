import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, waitFor, type TestServer } from './helpers/server.ts';
import { FIXTURES, startFixtureServer, type FixtureServer } from './helpers/fixtures.ts';
import type { StoredSnippet } from '../lib/model.ts';

const expected = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8')) as {
  'static-docs': {
    pages: Record<string, { depthRobots: number | null; depthLinksOnly: number | null; codeBlocks: number; codeLanguages: Record<string, number> }>;
    duplicateMain: string[];
  };
};

let fx: FixtureServer;
before(async () => {
  fx = await startFixtureServer();
});
after(async () => {
  await fx?.close();
});

async function crawl(s: TestServer, body: Record<string, unknown>): Promise<{ project: string; queueId: number; job: Record<string, unknown> }> {
  const res = await s.api('/api/parse-website', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as { message: string; project: string; queueId: number; position: number | null };
  assert.equal(res.status, 200, JSON.stringify(answer));
  assert.equal(typeof answer.message, 'string');
  assert.match(answer.project, /^\/websites\/[a-z0-9-]+$/);
  assert.equal(typeof answer.queueId, 'number');
  assert.ok(answer.position === null || typeof answer.position === 'number');
  const job = await waitFor(
    async () => {
      const r = await s.api(`/api/jobs/${answer.queueId}`);
      const j = (await r.json()) as Record<string, unknown>;
      return ['succeeded', 'failed', 'cancelled'].includes(j.state as string) ? j : null;
    },
    90_000,
    200,
  );
  return { project: answer.project, queueId: answer.queueId, job: job! };
}

async function snippetsOf(s: TestServer, libraryId: string): Promise<StoredSnippet[]> {
  const v = s.services.store.libraries.currentVersion(libraryId, '');
  assert.ok(v, `${libraryId} has a served version`);
  return s.services.store.snippets.list(v.id, 100_000);
}

function pagePath(url: string): string {
  const p = new URL(url).pathname.replace(/^\/static\//, '');
  return p === '' ? 'index.html' : p;
}

test('parse-website errors: missing field, missing key, bad scheme, metadata address, no license', async () => {
  const s = await startTestServer();
  try {
    const post = (body: unknown, auth?: string | null) =>
      s.api('/api/parse-website', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), auth });
    let r = await post({ maxPages: 5 });
    assert.equal(r.status, 400);
    const b = (await r.json()) as { error: string; message: string };
    assert.equal(b.error, 'validation_error');
    assert.match(b.message, /websiteUrl/);
    r = await post({ websiteUrl: `${fx.url}/static/` }, null);
    assert.equal(r.status, 401);
    assert.equal(((await r.json()) as { error: string }).error, 'invalid_api_key');
    r = await post({ websiteUrl: 'file:///etc/passwd' });
    assert.equal(r.status, 400);
    assert.equal(((await r.json()) as { error: string }).error, 'validation_error');
    r = await post({ websiteUrl: 'http://169.254.169.254/latest/meta-data/' });
    assert.equal(r.status, 403);
    assert.equal(((await r.json()) as { error: string }).error, 'forbidden');
    r = await s.api('/api/v2/add/website', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(r.status, 400);
  } finally {
    await s.close();
  }
  const unlicensed = await startTestServer({ license: false });
  try {
    const r = await unlicensed.api('/api/parse-website', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ websiteUrl: `${fx.url}/static/` }),
    });
    assert.equal(r.status, 403);
    const b = (await r.json()) as { error: string; message: string };
    assert.equal(b.error, 'license_required');
    assert.equal(typeof b.message, 'string');
  } finally {
    await unlicensed.close();
  }
});

test('static mdBook site: every page within robots.txt indexed once, code blocks with languages, re-crawl skips unchanged pages', async () => {
  const s = await startTestServer();
  try {
    const { project, queueId, job } = await crawl(s, { websiteUrl: `${fx.url}/static/`, maxPages: 200, name: 'StrictPath Guide' });
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    const entries = await s.services.store.crawl.entries(queueId);
    const fetched = entries.filter((e) => ['done', 'unchanged', 'duplicate'].includes(e.state));
    const exp = expected['static-docs'].pages;
    const reachable = Object.entries(exp)
      .filter(([, v]) => v.depthRobots !== null)
      .map(([k]) => k)
      .sort();
    assert.equal(reachable.length, 46);
    assert.deepEqual(fetched.map((e) => pagePath(e.url)).sort(), reachable, 'exactly the 46 pages reachable under robots.txt');
    assert.ok(!entries.some((e) => /print\.html|toc\.html/.test(e.url) && e.state !== 'skipped'), 'robots.txt disallowed pages are not fetched');
    // index.html and getting_started.html carry the same <main>: one of them is a duplicate.
    const dups = fetched.filter((e) => e.state === 'duplicate');
    assert.equal(dups.length, 1);
    assert.ok(['index.html', 'getting_started.html'].includes(pagePath(dups[0]!.url)));

    const progress = job.progress as Record<string, number>;
    assert.equal(progress.pagesDone, 46);
    assert.equal(progress.pagesQueued, 0);
    assert.equal(progress.pagesFailed, 0);

    const snippets = await snippetsOf(s, project);
    const code = snippets.filter((x) => x.kind === 'code');
    const info = snippets.filter((x) => x.kind === 'info');
    const indexedPages = new Set(snippets.map((x) => pagePath(x.sourceId.split('#')[0]!)));
    assert.equal(indexedPages.size, 44 + 1, '45 distinct pages (46 minus the duplicate) hold snippets');
    // 371 language-tagged blocks in the 46 pages, minus the 7 of the duplicate page; two more blocks carry no language.
    const dupPage = pagePath(dups[0]!.url);
    const labelled = 371 - exp[dupPage]!.codeBlocks;
    const byLang: Record<string, number> = {};
    for (const c of code) byLang[c.language] = (byLang[c.language] ?? 0) + 1;
    // One snippet per code block: the labelled ones by their class, the two unlabelled ones guessed.
    assert.equal(code.length, labelled + 2);
    assert.deepEqual(byLang, { rust: 355 - exp[dupPage]!.codeLanguages.rust!, bash: 9, toml: 5, html: 1, css: 1, text: 2 });
    assert.ok(!Object.keys(byLang).some((l) => /\s|no_run|ignore/.test(l)), 'first class token only');
    // Every code snippet points at a page anchor and has a title and description; mdBook's hidden lines are gone.
    for (const c of code) {
      assert.match(c.sourceId, /^http:\/\/127\.0\.0\.1:\d+\/static\/.*#[\w-]+$/);
      assert.ok(c.title && c.description, `title/description for ${c.sourceId}`);
    }
    assert.ok(!code.some((c) => c.codeList[0]!.code.includes('#![allow(unused)]')), 'mdBook boring lines dropped');
    const chapter3 = info.filter((x) => x.sourceId.includes('tutorial/chapter3_markers.html'));
    assert.ok(chapter3.length > 3);
    assert.ok(
      chapter3.every((x) => x.breadcrumb.startsWith('Chapter 3: Markers to the Rescue')),
      chapter3.map((x) => x.breadcrumb).join('\n'),
    );
    assert.ok(
      info.some((x) => x.breadcrumb.split(' > ').length === 3),
      'h3 sections carry page > h2 > h3',
    );
    // Noise is gone: no menu, theme list or keyboard help text.
    assert.ok(!info.some((x) => /Keyboard shortcuts|Press <kbd>|Toggle Table of Contents|\bCoal\b.*\bNavy\b/.test(x.content)));
    const lib = s.services.store.libraries.get(project)!;
    assert.equal(lib.title, 'StrictPath Guide');
    assert.equal(lib.sourceType, 'website');

    // The same site again without force is a conflict, not a second library.
    const again = await s.api('/api/parse-website', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ websiteUrl: `${fx.url}/static/` }),
    });
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { error: string }).error, 'conflict');

    // With force: a re-crawl; every page is unchanged and the same snippets are served.
    const re = await crawl(s, { websiteUrl: `${fx.url}/static/`, maxPages: 200, force: true });
    assert.equal(re.job.state, 'succeeded');
    const reProgress = re.job.progress as Record<string, number>;
    assert.equal(reProgress.pagesDone, 46);
    assert.equal(reProgress.pagesUnchanged, 45);
    assert.equal((await snippetsOf(s, project)).length, snippets.length);
  } finally {
    await s.close();
  }
});

test('max depth, exclusions and robots off: depth 2 holds 18 pages; excluded paths never fetched', async () => {
  const s = await startTestServer({ config: { crawlRespectRobots: false } });
  try {
    const { queueId, job } = await crawl(s, { websiteUrl: `${fx.url}/static/`, maxPages: 200, maxDepth: 2 });
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    const exp = expected['static-docs'].pages;
    const within = Object.entries(exp)
      .filter(([, v]) => v.depthLinksOnly !== null && v.depthLinksOnly <= 2)
      .map(([k]) => k)
      .sort();
    assert.equal(within.length, 18);
    const all = await s.services.store.crawl.entries(queueId);
    const fetched = all.filter((e) => e.httpStatus === 200);
    assert.deepEqual(fetched.map((e) => pagePath(e.url)).sort(), within, JSON.stringify(all.filter((e) => e.state !== 'done')));
    // print.html (every chapter again) says noindex: fetched for its links, not indexed.
    const print = all.find((e) => pagePath(e.url) === 'print.html')!;
    assert.equal(print.state, 'skipped');
    assert.equal(print.error, 'noindex');

    const s2 = await crawl(s, { websiteUrl: `${fx.url}/static/best_practices.html`, maxPages: 200, maxDepth: 3, excludePatterns: ['/best_practices/*'] });
    assert.equal(s2.job.state, 'succeeded', JSON.stringify(s2.job));
    const urls = (await s.services.store.crawl.entries(s2.queueId)).map((e) => e.url);
    assert.ok(urls.length > 3);
    assert.ok(!urls.some((u) => u.includes('/best_practices/')), 'excluded pattern never entered the frontier');

    // A start URL that redirects (/static -> /static/) stays in scope.
    const redirected = await crawl(s, { websiteUrl: `${fx.url}/static`, maxDepth: 0, force: true });
    assert.equal(redirected.job.state, 'succeeded', JSON.stringify(redirected.job));
    const only = await s.services.store.crawl.entries(redirected.queueId);
    assert.deepEqual(
      only.map((e) => [new URL(e.url).pathname, e.state, e.httpStatus]),
      [['/static', 'unchanged', 200]],
      'fetched once, followed to /static/, known from the first crawl',
    );

    const limited = await crawl(s, { websiteUrl: `${fx.url}/static/tutorial/overview.html`, maxPages: 5 });
    assert.equal(limited.job.state, 'succeeded');
    const n = (await s.services.store.crawl.entries(limited.queueId)).filter((e) => e.state !== 'skipped').length;
    assert.equal(n, 5, 'maxPages bounds the crawl');
  } finally {
    await s.close();
  }
});
