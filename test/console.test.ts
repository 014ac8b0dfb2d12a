import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { devLicense, startTestServer, tempDir, waitFor, type TestServer } from './helpers/server.ts';
import { CORPUS_BUNDLES, startFixtureServer, type FixtureServer } from './helpers/fixtures.ts';
import { importAndCrawl, launchBrowser, shot } from './helpers/browser.ts';

/**
 * The web console as an administrator and a member use it, in Chromium against the real server:
 * first-run owner setup, license install, bundle import and crawl followed live on the Jobs page,
 * a question on a library page, keys, usage, sign-out, and a member kept out of the admin pages.
 * With UPDATE_SCREENSHOTS=1 it writes the screenshots of docs/screenshots/ (linked from the README).
 */

/** Waits until the Jobs page shows a job of `kind` that succeeded (pushed by server-sent events). */
async function jobSucceeds(page: Page, kind: string): Promise<void> {
  await page.locator('#jobs tbody tr[data-state=succeeded]', { hasText: kind }).first().waitFor({ timeout: 60_000 });
}

async function firstRun(page: Page, s: TestServer): Promise<void> {
  // First run: the setup link printed at start creates the owner and signs them in.
  await page.goto(s.setupUrl!);
  await shot(page, 'setup');
  const setup = page.locator('#setup-page');
  await setup.getByLabel('User name').fill('olga');
  await setup.getByLabel('Password (10 characters or more)').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create and sign in' }).click();
  await page.locator('#who', { hasText: 'olga (owner, default)' }).waitFor();

  // A fresh instance answers questions about Stacks itself (its own documentation, indexed at start).
  await page.getByRole('link', { name: 'Search' }).click();
  await page.getByLabel(/^Question/).fill('how do I sign in with single sign-on');
  await page.getByLabel('Library (optional)').fill('stacks');
  await waitFor(
    async () => {
      await page.getByRole('button', { name: 'Search' }).click();
      return (await page.locator('#results article', { hasText: /OpenID Connect/i }).count()) > 0 ? true : null;
    },
    30_000,
    500,
  );
  await page.getByRole('link', { name: 'My keys' }).click();
}

async function keys(page: Page, s: TestServer): Promise<void> {
  // Keys: create one (shown once, with the MCP configuration to paste), then revoke it.
  await page.locator('#keys-page').getByLabel('Name', { exact: true }).fill('assistant');
  await page.getByRole('button', { name: 'Create key' }).click();
  // The key appears when the API has answered, not at the click.
  await page.locator('#new-key-value', { hasText: /^stk_/ }).waitFor();
  const key = (await page.locator('#new-key-value').textContent()) ?? '';
  assert.match(key, /^stk_/);
  assert.ok((await page.locator('#mcp-config').textContent())?.includes(`${new URL(s.url).origin}/mcp`));
  await shot(page, 'keys');
  // Revoking asks first.
  page.once('dialog', (d) => void d.accept());
  await page.locator('#keys tbody tr', { hasText: 'assistant' }).getByRole('button', { name: 'Revoke' }).click();
  await page.locator('#keys tbody tr', { hasText: 'revoked' }).waitFor();
  assert.equal((await s.api('/api/v2/context?libraryId=/a/b&query=x', { auth: key })).status, 401);
}

async function licenseImportCrawl(page: Page, site: FixtureServer): Promise<void> {
  // License: none yet; installed by upload.
  await page.getByRole('link', { name: 'Admin' }).click();
  await page.locator('#license-state', { hasText: /missing|no license|not installed/i }).waitFor();
  const licenseFile = path.join(tempDir(), 'stacks.license.json');
  fs.writeFileSync(licenseFile, devLicense());
  await page.getByLabel('License file').setInputFiles(licenseFile);
  await page.getByRole('button', { name: 'Install' }).click();
  await page.locator('#license-status', { hasText: 'License installed' }).waitFor();

  // Import a bundle for everyone and crawl the fixture site; both jobs' progress arrives on the Jobs page as it happens.
  await page.getByRole('link', { name: 'Add' }).click();
  await importAndCrawl(page, path.join(CORPUS_BUNDLES, 'pino.json'), site.url);
  await shot(page, 'add');
  await page.locator('#crawl-status').getByRole('link', { name: 'Follow it on the Jobs page' }).click();
  await page.locator('#jobs-status', { hasText: 'Live.' }).waitFor();
  await jobSucceeds(page, 'import');
  await jobSucceeds(page, 'crawl');
  await shot(page, 'jobs');
}

async function libraryAndSearch(page: Page, s: TestServer): Promise<void> {
  // The library page: facts, versions, snippets, and a question answered as the API answers it.
  await page.goto(`${s.url}/#/library/pinojs/pino`);
  await page.locator('#versions tbody tr', { hasText: 'current' }).waitFor();
  await page.locator('#snippets article').first().waitFor();
  await page.getByLabel('Try a question on this library').fill('how do I redact sensitive keys');
  await page.getByRole('button', { name: 'Ask' }).click();
  await page
    .locator('#ask-results article', { hasText: /redact/i })
    .first()
    .waitFor();
  await shot(page, 'library');

  // Search on the home page, and the library list.
  await page.goto(`${s.url}/#/`);
  await page.getByLabel(/^Question/).fill('pino child logger bindings');
  // The library field still says `stacks` from the first search: this question names none.
  await page.getByLabel('Library (optional)').fill('');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('#results article').first().waitFor();
  // The answer says which library it picked for a question that named none.
  assert.match((await page.locator('#status').textContent()) ?? '', /from \/pinojs\/pino.*\(picked from the question\)/);
  await shot(page, 'search');
}

async function usageSignOutMember(page: Page, s: TestServer): Promise<void> {
  // Usage, then sign out.
  await page.goto(`${s.url}/#/admin`);
  await page.locator('#usage figure canvas').first().waitFor();
  await page.locator('#system dd', { hasText: 'MB' }).first().waitFor();
  await shot(page, 'admin');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('#nav-signin').waitFor();
  assert.equal(await page.locator('#who').textContent(), '');

  // A member signs in: no Admin link, and the admin page says it is not for them.
  const created = await s.api('/api/users', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ken', password: 'kens long password', role: 'member' }),
  });
  assert.equal(created.status, 201);
  await page.goto(`${s.url}/#/signin`);
  await shot(page, 'signin');
  const signIn = page.locator('#signin-page');
  await signIn.getByLabel('User name').fill('ken');
  await signIn.getByLabel('Password').fill('kens long password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#who', { hasText: 'ken (member, default)' }).waitFor();
  assert.equal(await page.locator('#nav-admin').isVisible(), false);
  await page.goto(`${s.url}/#/admin`);
  await page.locator('#admin-status', { hasText: 'for owners and admins' }).waitFor();
}

test('console: setup, license, import and crawl watched live, library page, keys, usage, sign-out, a member kept out of admin', async (t) => {
  const site = await startFixtureServer();
  t.after(() => site.close());
  const s = await startTestServer({ license: false, config: { ownDocs: true } });
  t.after(() => s.close());
  const browser = await launchBrowser(s.services.config.chromiumPath);
  t.after(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));

  await firstRun(page, s);
  await keys(page, s);
  await licenseImportCrawl(page, site);
  await libraryAndSearch(page, s);
  await usageSignOutMember(page, s);
  assert.deepEqual(errors, []);
});
