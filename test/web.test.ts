import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { startTestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';

test('web UI: the page, the library list API, and a search typed into the page in Chromium', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const browser = await chromium.launch({ executablePath: s.services.config.chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  t.after(() => browser.close());
  await loadSearchCorpus(s.services, ['pino', 'zod']);
  const home = await s.api('/', { auth: null });
  assert.equal(home.status, 200);
  assert.match(home.headers.get('content-type') ?? '', /text\/html/);
  assert.match(home.headers.get('content-security-policy') ?? '', /script-src 'self'/);

  const list = (await (await s.api('/api/libraries', { auth: null })).json()) as { libraries: { id: string; totalSnippets: number }[] };
  assert.deepEqual(list.libraries.map((l) => l.id), ['/colinhacks/zod', '/pinojs/pino']);
  assert.ok(list.libraries.every((l) => l.totalSnippets > 0));

  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(s.url.replace('localhost', '127.0.0.1'));
  await page.waitForSelector('#libraries tbody tr');
  assert.equal(await page.locator('#libraries tbody tr').count(), 2);
  await page.fill('#query', 'how do I redact fields from log output');
  await page.fill('#library', 'pino');
  await page.click('button[type=submit]');
  await page.waitForSelector('#results article');
  const first = await page.locator('#results article .meta').first().textContent();
  assert.match(first ?? '', /\/pinojs\/pino/);
  assert.deepEqual(errors, []);
});
