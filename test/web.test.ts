import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser } from './helpers/browser.ts';
import { startTestServer } from './helpers/server.ts';
import { loadSearchCorpus } from './helpers/search-corpus.ts';

test('web UI: the page, the library list API, and a search typed into the page in Chromium', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const browser = await launchBrowser(s.services.config.chromiumPath);
  t.after(() => browser.close());
  await loadSearchCorpus(s.services, ['pino', 'zod']);
  const home = await s.api('/', { auth: null });
  assert.equal(home.status, 200);
  assert.match(home.headers.get('content-type') ?? '', /text\/html/);
  assert.match(home.headers.get('content-security-policy') ?? '', /script-src 'self'/);

  const list = (await (await s.api('/api/libraries', { auth: null })).json()) as { libraries: { id: string; totalSnippets: number }[] };
  assert.deepEqual(
    list.libraries.map((l) => l.id),
    ['/colinhacks/zod', '/pinojs/pino'],
  );
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

test('web UI: snippets as sanitized markdown with links, code with language and copy, library pages, keyboard, phone width', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const browser = await launchBrowser(s.services.config.chromiumPath);
  t.after(() => browser.close());
  // Documentation is written by whoever published it: markdown to render, and markup that must not run.
  const build = await s.services.writer.begin({ id: '/acme/widgets', title: 'Widgets', description: 'Widget docs', sourceType: 'repo' }, { tag: '' });
  await build.add([
    {
      kind: 'info',
      sourceId: 'https://docs.acme.test/guide/frobnicate#setup',
      pageTitle: 'Guide',
      breadcrumb: 'Guide > Frobnicate',
      content:
        'To **frobnicate** a widget, call `frob()` first; see [the options](./options.md#frob) and [this](javascript:alert(1)).\n\n<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>',
    },
    {
      kind: 'code',
      sourceId: 'https://docs.acme.test/guide/frobnicate#setup~2',
      title: 'Frobnicate a widget',
      description: 'Calls frob on a widget.',
      language: 'js',
      pageTitle: 'Guide',
      codeList: [{ language: 'js', code: "import { frob } from 'widgets';\nfrob(widget);" }],
    },
  ]);
  await build.commit();

  const page = await browser.newPage({ viewport: { width: 375, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(s.url.replace('localhost', '127.0.0.1'));
  assert.equal(await page.locator('link[rel=icon]').getAttribute('href'), 'favicon.svg');
  assert.equal((await s.api('/favicon.svg', { auth: null })).status, 200);
  await page.waitForSelector('#libraries tbody tr');
  // Every input has a label; "/" focuses the question.
  for (const id of ['key', 'query', 'library', 'version']) assert.equal(await page.locator(`label[for=${id}]`).count(), 1, id);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'query');
  await page.keyboard.type('how do I frobnicate a widget');
  await page.fill('#library', '/acme/widgets');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#results article');

  // Code snippets come first (the JSON order); the prose of the guide's section is the second card.
  const prose = page.locator('#results article .prose', { hasText: 'frobnicate a widget, call' });
  assert.equal(await prose.locator('strong').textContent(), 'frobnicate', 'markdown rendered, no ** left');
  assert.doesNotMatch((await prose.textContent()) ?? '', /\*\*|\]\(/);
  const link = prose.locator('a', { hasText: 'the options' });
  assert.equal(await link.getAttribute('href'), 'https://docs.acme.test/guide/options.md#frob', 'relative links resolve against the source page');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
  assert.equal(await prose.locator('a', { hasText: 'this' }).getAttribute('href'), null, 'a javascript: link is not a link');
  assert.equal(await page.locator('#results img[onerror], #results script').count(), 0);
  assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
  assert.equal(await page.locator('#results article .meta a').first().getAttribute('href'), 'https://docs.acme.test/guide/frobnicate#setup~2');

  const figure = page.locator('#results figure.code').first();
  assert.equal(await figure.locator('.lang').textContent(), 'js');
  await figure.locator('button.copy').click();
  await page.waitForFunction(() => document.querySelector('#results figure.code button.copy')?.textContent === 'Copied');

  // Nothing is wider than a phone.
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scrolling at 375 px');

  // A library row opens the library's page, where a question is answered from that library.
  await page.locator('#libraries tbody tr', { hasText: '/acme/widgets' }).click();
  await page.waitForSelector('#library-page:not([hidden])');
  assert.match((await page.locator('#library-title').textContent()) ?? '', /Widgets \(\/acme\/widgets\)/);
  await page.fill('#ask-query', 'frobnicate');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#ask-results article');
  assert.match((await page.locator('#ask-results article h3').first().textContent()) ?? '', /Frobnicate/);
  await page.goBack();
  await page.waitForSelector('#home:not([hidden])');
  assert.deepEqual(errors, []);
});
