import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { devLicense, freePort, startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { CORPUS_BUNDLES, startFixtureServer, type FixtureServer } from './helpers/fixtures.ts';
import { importAndCrawl, launchBrowser, shot } from './helpers/browser.ts';

/**
 * The first hour in Chromium (issue 42): the instance's public address is another network name
 * than the one it listens on (stacks.test, resolved to 127.0.0.1 by Chromium alone), the setup
 * link, the checklist, the MCP configuration used as pasted, an invitation taken up by a second
 * person, and a development license refused in production mode next to its Install button.
 */

/** A port free now, so that the public address can name it before the server starts. */

/**
 * MCP over Streamable HTTP from the page, with what a pasted configuration holds: its URL and
 * headers. Plain JavaScript in a string: the test's own functions are compiled with helpers the page lacks.
 */
const MCP_IN_PAGE = `async ({ url, headers }) => {
  const post = async (body) => {
    const r = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  };
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'first-hour', version: '1' } } });
  if (init.status !== 200) return { status: init.status, text: JSON.stringify(init.body) };
  const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search-docs', arguments: { query: 'child logger bindings', libraries: ['pino'] } } });
  return { status: call.status, text: call.body.result?.content?.map((c) => c.text).join('\\n') ?? JSON.stringify(call.body) };
}`;

async function mcpCall(page: Page, url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return page.evaluate(`(${MCP_IN_PAGE})(${JSON.stringify({ url, headers })})`) as Promise<{ status: number; text: string }>;
}

/** The setup link on the public address, the checklist on Home and Add, a license installed by upload. */
async function setupChecklistLicense(page: Page, s: TestServer, publicUrl: string): Promise<void> {
  // The setup link printed at first start is on the public address, and works there.
  assert.ok(s.setupUrl?.startsWith(`${publicUrl}/#/setup/`), s.setupUrl ?? '');
  await page.goto(s.setupUrl!);
  await page.locator('#setup-page').getByLabel('User name').fill('olga');
  await page.locator('#setup-page').getByLabel('Password (10 characters or more)').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create and sign in' }).click();
  await page.locator('#who', { hasText: 'olga (owner, default)' }).waitFor();

  // The checklist: four things to do, each a link to where it is done.
  await page.goto(`${publicUrl}/#/`);
  const home = page.locator('#checklist-home');
  await home.locator('h3', { hasText: '4 of 4 left' }).waitFor();
  await shot(page, 'first-hour-checklist');
  assert.equal(await home.getByRole('link', { name: 'Install a license' }).getAttribute('href'), '#/admin');
  assert.equal(await home.getByRole('link', { name: 'Add a first library' }).getAttribute('href'), '#/add');
  await page.goto(`${publicUrl}/#/add`);
  await page.locator('#checklist-add h3', { hasText: '4 of 4 left' }).waitFor();

  // License installed by upload; said next to the Install button.
  await page.goto(`${publicUrl}/#/admin`);
  const licenseFile = path.join(tempDir(), 'dev.license.json');
  fs.writeFileSync(licenseFile, devLicense());
  await page.getByLabel('License file').setInputFiles(licenseFile);
  await page.getByRole('button', { name: 'Install' }).click();
  await page.locator('#license-status', { hasText: 'License installed' }).waitFor();
  await page.locator('#public-url-state', { hasText: 'STACKS_PUBLIC_URL' }).waitFor();
}

/** The first libraries, imported and crawled from the Add page, followed on the Jobs page, and a question answered from them. */
async function importCrawlSearch(page: Page, publicUrl: string, site: FixtureServer): Promise<void> {
  await page.goto(`${publicUrl}/#/add`);
  await importAndCrawl(page, path.join(CORPUS_BUNDLES, 'pino.json'), site.url);
  await page.locator('#crawl-status').getByRole('link', { name: 'Follow it on the Jobs page' }).click();
  for (const kind of ['import', 'crawl']) await page.locator('#jobs tbody tr[data-state=succeeded]', { hasText: kind }).first().waitFor({ timeout: 60_000 });
  await shot(page, 'first-hour-jobs');
  // A question naming no library: answered from the imported one, which the answer names.
  await page.goto(`${publicUrl}/#/`);
  await page.getByLabel(/^Question/).fill('pino child logger bindings');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('#results article').first().waitFor();
  assert.match((await page.locator('#status').textContent()) ?? '', /from \/pinojs\/pino.*\(picked from the question\)/);
  await shot(page, 'first-hour-search');
}

/** A key, its MCP configurations on the public address, and a tool call with the pasted VS Code configuration. */
async function keysAndMcp(page: Page, publicUrl: string): Promise<void> {
  // No notice, nothing cut off.
  await page.goto(`${publicUrl}/#/keys`);
  await page.locator('#keys-page').getByLabel('Name', { exact: true }).fill('laptop assistant');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.locator('#new-key-value', { hasText: /^stk_/ }).textContent())!;
  const claude = page.locator('#mcp-config figure', { hasText: 'Claude Code' }).locator('pre');
  await claude.filter({ hasText: key }).waitFor();
  assert.equal(await claude.textContent(), `claude mcp add --transport http stacks ${publicUrl}/mcp --header "Authorization: Bearer ${key}"`);
  const box = await claude.evaluate((e) => ({ scroll: e.scrollWidth, client: e.clientWidth }));
  assert.ok(box.scroll <= box.client, `the Claude Code command is not cut off (${box.scroll} > ${box.client})`);
  assert.equal(await page.locator('#mcp-notice').isVisible(), false);
  await shot(page, 'first-hour-mcp');
  const configText = (await page.locator('#mcp-config').textContent())!;
  assert.ok(!configText.includes('npx stacks') && !configText.includes('localhost') && !configText.includes('127.0.0.1'), configText);
  const vscode = JSON.parse((await page.locator('#mcp-config figure', { hasText: 'VS Code' }).locator('pre').textContent())!) as {
    servers: { stacks: { url: string; headers: Record<string, string> } };
  };
  assert.equal(vscode.servers.stacks.url, `${publicUrl}/mcp`);
  const windsurf = JSON.parse((await page.locator('#mcp-config figure', { hasText: 'Windsurf' }).locator('pre').textContent())!) as {
    mcpServers: { stacks: { serverUrl: string } };
  };
  assert.equal(windsurf.mcpServers.stacks.serverUrl, `${publicUrl}/mcp`);
  const desktop = (await page.locator('#mcp-config figure', { hasText: 'Claude Desktop' }).locator('pre').textContent())!;
  assert.match(desktop, /"mcp-remote"[\s\S]*"--allow-http"/);
  // The configuration as pasted, from the other network name: a tool call answers with pino's docs.
  const answer = await mcpCall(page, vscode.servers.stacks.url, vscode.servers.stacks.headers);
  assert.equal(answer.status, 200, answer.text);
  assert.match(answer.text, /child/i);
  assert.equal((await mcpCall(page, vscode.servers.stacks.url, { Authorization: 'Bearer stk_wrong' })).status, 401);
}

/** An invitation made on Admin, the checklist gone, and the invitee signed in by the link, which then no longer works. */
async function invitation(browser: Browser, page: Page, publicUrl: string, errors: string[]): Promise<void> {
  // An invitation: the link (on the public address) in a copy box, shown once.
  await page.goto(`${publicUrl}/#/admin`);
  await page.locator('#invite-admin').getByLabel('Role').selectOption('member');
  await page.getByRole('button', { name: 'Create invitation link' }).click();
  const link = (await page.locator('#invite-link pre').textContent())!;
  assert.match(link, new RegExp(`^${publicUrl.replace(/\./g, '\\.')}/#/invite/[A-Za-z0-9_-]{30,}$`));
  await page.locator('#invite-link button', { hasText: 'Copy' }).waitFor();
  await page.locator('#invitations tbody tr', { hasText: 'open' }).waitFor();

  // The checklist is gone once everything is done.
  await page.goto(`${publicUrl}/#/`);
  await page.locator('#libraries tbody tr').first().waitFor();
  await page.waitForFunction(() => document.getElementById('checklist-home')?.hidden === true);
  await page.goto(`${publicUrl}/#/add`);
  await page.waitForFunction(() => document.getElementById('checklist-add')?.hidden === true);

  // The invitee, in a browser of their own: chooses a name and password and lands signed in.
  const invitee = await (await browser.newContext()).newPage();
  invitee.on('pageerror', (e) => errors.push(e.message));
  await invitee.goto(link);
  await invitee.locator('#invite-about', { hasText: 'teamspace default as a member' }).waitFor();
  await invitee.locator('#invite-page').getByLabel('User name').fill('nina');
  await invitee.locator('#invite-page').getByLabel('Password (10 characters or more)').fill('ninas long password');
  await invitee.getByRole('button', { name: 'Create account and sign in' }).click();
  await invitee.locator('#who', { hasText: 'nina (member, default)' }).waitFor();
  await invitee.locator('#home').waitFor();
  // A member cannot invite (403), and the link no longer works.
  const refused = await invitee.evaluate(async () => {
    const s = (await (await fetch('/api/session')).json()) as { csrfToken: string };
    return (await fetch('/api/invitations', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken }, body: '{}' }))
      .status;
  });
  assert.equal(refused, 403);
  const again = await (await browser.newContext()).newPage();
  await again.goto(link);
  await again.locator('#invite-page-status', { hasText: 'already used' }).waitFor();
  assert.equal(await again.locator('#invite-accept').isVisible(), false);
}

test('first hour: setup link, checklist, MCP configuration on the public address used as pasted, invitation, checklist gone', async (t) => {
  const port = await freePort();
  const publicUrl = `http://stacks.test:${port}`;
  const s = await startTestServer({ license: false, config: { port, publicUrl } });
  t.after(() => s.close());
  const site = await startFixtureServer();
  t.after(() => site.close());
  const browser = await launchBrowser(s.services.config.chromiumPath, ['--host-resolver-rules=MAP stacks.test 127.0.0.1']);
  t.after(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));

  await setupChecklistLicense(page, s, publicUrl);
  await importCrawlSearch(page, publicUrl, site);
  await keysAndMcp(page, publicUrl);
  await invitation(browser, page, publicUrl, errors);
  assert.deepEqual(errors, []);
});

test('first hour: a development license refused in production mode says why next to Install; the state says refused', async (t) => {
  const s = await startTestServer({ license: false, config: { dev: false } });
  t.after(() => s.close());
  const browser = await launchBrowser(s.services.config.chromiumPath);
  t.after(() => browser.close());
  const page = await (await browser.newContext()).newPage();
  // As the instance's owner, with the first-start key kept in the browser.
  await page.goto(`${s.url}/`);
  await page.evaluate(`localStorage.setItem('stacks.key', ${JSON.stringify(s.key)})`);
  await page.goto(`${s.url}/#/admin`);
  await page.reload();
  await page.locator('#license-state', { hasText: 'missing' }).waitFor();
  // Without a public address the console says what its configurations use.
  await page.locator('#public-url-state', { hasText: 'Not set' }).waitFor();
  const licenseFile = path.join(tempDir(), 'dev.license.json');
  fs.writeFileSync(licenseFile, devLicense());
  await page.getByLabel('License file').setInputFiles(licenseFile);
  await page.getByRole('button', { name: 'Install' }).click();
  await page.locator('#license-status', { hasText: 'development license' }).waitFor();
  assert.match((await page.locator('#license-state').textContent())!, /^refused: This is a development license/);
  await page.goto(`${s.url}/#/keys`);
  await page.locator('#mcp-notice', { hasText: "this browser's address" }).waitFor();
});
