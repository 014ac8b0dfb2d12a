import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser } from './helpers/browser.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * An appliance is opened from other machines as http://<its name>:3000/, never as localhost: over
 * plain HTTP the page must load its script and style from where it is (no upgrade-insecure-requests,
 * no HSTS), and HSTS is sent only for a request that really arrived over TLS.
 */
test('the web page works over plain HTTP under a hostname that is not localhost', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const port = new URL(s.url).port;
  const browser = await launchBrowser(s.services.config.chromiumPath, ['--host-resolver-rules=MAP stacks.lan 127.0.0.1', '--disable-features=HttpsUpgrades']);
  t.after(() => browser.close());
  const page = await browser.newPage();
  const failed: string[] = [];
  const loaded: string[] = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  page.on('response', (r) => {
    if (r.ok()) loaded.push(r.url());
  });
  const response = await page.goto(`http://stacks.lan:${port}/`);
  assert.equal(response?.status(), 200);
  await page.waitForLoadState('networkidle');
  assert.deepEqual(failed, [], 'no request failed');
  assert.ok(loaded.includes(`http://stacks.lan:${port}/js/main.js`), loaded.join(' '));
  assert.ok(loaded.includes(`http://stacks.lan:${port}/style.css`), loaded.join(' '));
  // The stylesheet applied: the page is not the browser's unstyled default.
  assert.notEqual(await page.evaluate(() => getComputedStyle(document.body).fontFamily), 'Times New Roman');

  const headers = response!.headers();
  assert.doesNotMatch(headers['content-security-policy'] ?? '', /upgrade-insecure-requests/);
  assert.equal(headers['strict-transport-security'], undefined, 'no HSTS over plain HTTP');
});

test('HSTS only when a trusted proxy says the request came over TLS', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  // The test server trusts loopback proxies (the default): a forwarded https request is a TLS one.
  const viaTls = await s.api('/', { auth: null, headers: { 'x-forwarded-proto': 'https' } });
  assert.match(viaTls.headers.get('strict-transport-security') ?? '', /max-age=\d+/);
  const plain = await s.api('/', { auth: null });
  assert.equal(plain.headers.get('strict-transport-security'), null);
  const untrusted = await startTestServer({ config: { trustProxy: 'false' } });
  t.after(() => untrusted.close());
  const spoofed = await untrusted.api('/', { auth: null, headers: { 'x-forwarded-proto': 'https' } });
  assert.equal(spoofed.headers.get('strict-transport-security'), null, 'a forwarded header from an untrusted peer is ignored');
});
