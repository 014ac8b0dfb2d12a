import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startTestServer, tempDir, waitFor, devLicense } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A small docs site with ETags: / -> a, b; b -> c (c is linked only from b). Answers 304 to a
 * matching If-None-Match and counts what it served.
 */
async function etagSite() {
  const pages: Record<string, string> = {
    '/docs/': page('Home', 'The home page of the ETag test documentation.', ['/docs/a.html', '/docs/b.html']),
    '/docs/a.html': page('Alpha', 'Alpha explains the first concept of the library in detail.', []),
    '/docs/b.html': page('Beta', 'Beta explains the second concept and links onwards.', ['/docs/c.html']),
    '/docs/c.html': page('Gamma', 'Gamma is only linked from Beta, never from the home page.', []),
  };
  const served = { full: 0, notModified: 0 };
  const server = http.createServer((req, res) => {
    const body = pages[req.url ?? ''];
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
    if (req.headers['if-none-match'] === etag) {
      served.notModified++;
      res.writeHead(304, { etag }).end();
      return;
    }
    served.full++;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    pages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function page(title: string, text: string, links: string[]): string {
  return `<!doctype html><html><head><title>${title} - ETag Docs</title></head><body><nav><a href="/docs/">Home</a></nav><main><h1>${title}</h1>
<h2 id="usage">Usage</h2><p>${text}</p><pre><code class="language-python">print("${title}")</code></pre>
${links.map((l) => `<p><a href="${l}">${l}</a></p>`).join('')}</main></body></html>`;
}

test('scheduled re-crawl: node-cron queues it, unchanged pages answer 304 and their stored links are still followed', async () => {
  const site = await etagSite();
  const s = await startTestServer();
  try {
    const first = await s.api('/api/parse-website', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ websiteUrl: `${site.url}/docs/`, maxPages: 10, schedule: '*/2 * * * * *', name: 'ETag Docs' }),
    });
    assert.equal(first.status, 200);
    const { project, queueId } = (await first.json()) as { project: string; queueId: number };
    await waitFor(async () => (await s.services.jobs.get(queueId)).state === 'succeeded', 30_000);
    assert.equal(site.served.full, 4);
    assert.equal((await s.services.store.crawl.site(project))!.schedule, '*/2 * * * * *');

    // The schedule fires within seconds and queues a re-crawl with the stored options.
    const again = (await waitFor(
      async () => (await s.services.jobs.list({ kind: 'crawl', libraryId: project })).find((j) => j.id !== queueId && j.state === 'succeeded') ?? null,
      30_000,
      100,
    ))!;
    await s.services.crawler.setSchedule(project, null);
    assert.equal((again.payload as { trigger: string }).trigger, 'schedule');
    const entries = await s.services.store.crawl.entries(again.id);
    assert.deepEqual(
      entries.map((e) => new URL(e.url).pathname).sort(),
      ['/docs', '/docs/a.html', '/docs/b.html', '/docs/c.html'].map((p) => (p === '/docs' ? '/docs/' : p)).sort(),
    );
    assert.ok(
      entries.every((e) => e.state === 'unchanged' && e.render === 'cache' && e.httpStatus === 304),
      JSON.stringify(entries),
    );
    assert.ok(site.served.notModified >= 4);
    const v = s.services.store.libraries.currentVersion(project, '')!;
    assert.equal(v.jobId, again.id, 'the re-crawl built and swapped in a new version');
    const texts = (await s.services.store.snippets.list(v.id, 1000)).map((x) => x.content).join('\n');
    assert.match(texts, /Gamma is only linked from Beta/, 'a page reached only through an unchanged page is still indexed');
  } finally {
    await s.close();
    await site.close();
  }
});

test('CLI: stacks crawl with a depth limit, jobs list/show, crawl-schedule', async () => {
  const site = await etagSite();
  const dataDir = tempDir();
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  try {
    const common = ['--data-dir', dataDir, '--dev'];
    const r = await runCli(['crawl', `${site.url}/docs/`, '--max-depth', '1', '--name', 'ETag Docs', '--exclude', '/docs/a.*', ...common]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Indexed \/websites\/127-0-0-1-\d+-docs: 2 pages/);
    const list = await runCli(['jobs', 'list', '--json', ...common]);
    // The crawl, and the search-model job its new version queued.
    const jobs = (JSON.parse(list.stdout) as { id: number; kind: string; state: string; progress: { pagesDone: number } }[]).filter(
      (j) => j.kind !== 'search-model',
    );
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.kind, 'crawl');
    assert.equal(jobs[0]!.state, 'succeeded');
    const show = await runCli(['jobs', 'show', String(jobs[0]!.id), ...common]);
    assert.equal((JSON.parse(show.stdout) as { progress: { pagesDone: number } }).progress.pagesDone, 2);
    const libId = /Indexed (\S+):/.exec(r.stdout)![1]!;
    const sched = await runCli(['crawl-schedule', libId, '0 3 * * *', ...common]);
    assert.equal(sched.code, 0, sched.stderr);
    const bad = await runCli(['crawl-schedule', libId, 'not a cron', ...common]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /not a valid cron expression/);
    const again = await runCli(['crawl', `${site.url}/docs/`, ...common]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already indexed/);
  } finally {
    await site.close();
  }
});
