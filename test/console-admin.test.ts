import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startTestServer, waitFor, type TestServer } from './helpers/server.ts';
import { CORPUS_BUNDLES, startFixtureServer } from './helpers/fixtures.ts';
import { launchBrowser } from './helpers/browser.ts';

/**
 * Issue 42, points 6-8, in Chromium at 1,280 px against the real server: library settings (the
 * schedule only on websites, saved or refused, "Saved." stays), jobs in words with bars, durations,
 * links and Retry only where it helps, the usage chart (Chart.js, served by the instance), dates on
 * one line, empty states, the audit log naming members and refreshing, confirmation before a key
 * is revoked.
 */

async function json<T>(s: TestServer, pathname: string, init: RequestInit = {}): Promise<T> {
  const res = await s.api(pathname, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  assert.ok(res.ok, `${pathname}: ${res.status} ${await res.clone().text()}`);
  return (res.status === 204 ? {} : await res.json()) as T;
}

async function jobDone(s: TestServer, id: number): Promise<void> {
  await waitFor(async () => ['succeeded', 'failed'].includes((await json<{ state: string }>(s, `/api/jobs/${id}`)).state) || null, 60_000);
}

/** Whether the element's text sits on one line (no wrapped line box). */
const oneLine = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((e) => e.getClientRects().length === 1 && e.getBoundingClientRect().height < 30);

test('console: library settings, jobs in words, usage chart, dates, empty states, audit names, confirmations', async (t) => {
  const site = await startFixtureServer();
  t.after(() => site.close());
  const s = await startTestServer();
  t.after(() => s.close());

  // A bundle, a crawled site, and a version fetch that cannot succeed (the library is not from Git).
  const form = new FormData();
  form.append('bundleFile', new Blob([fs.readFileSync(path.join(CORPUS_BUNDLES, 'pino.json'))]), 'pino.json');
  form.append('visibility', 'instance');
  const imported = (await (await s.api('/api/import-libraries', { method: 'POST', body: form })).json()) as { jobs: { jobId: number }[] };
  const crawl = await json<{ project: string }>(s, '/api/parse-website', {
    method: 'POST',
    body: JSON.stringify({ websiteUrl: `${site.url}/static/`, maxPages: 4 }),
  });
  const site_ = crawl.project;
  for (const j of imported.jobs) await jobDone(s, j.jobId);
  await waitFor(async () => (await s.services.jobs.list({ kind: 'crawl', libraryId: site_ })).every((j) => j.state === 'succeeded') || null, 60_000);
  const fetch = s.services.jobs.enqueue('version-fetch', { libraryId: '/pinojs/pino', version: '99', repoUrl: null }, { libraryId: '/pinojs/pino' });
  await jobDone(s, (await fetch).id);
  for (let i = 0; i < 3; i++) await s.api('/api/v3/search?query=child+logger&library=pino');

  const browser = await launchBrowser(s.services.config.chromiumPath);
  t.after(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript((key) => localStorage.setItem('stacks.key', key), s.key);

  await jobsPage(page, s, site.url);
  await librarySettings(page, s, site_);
  await addLinksToJobs(page);
  await adminPage(page, s);
  await keyRevokeConfirmed(page, s);
  assert.deepEqual(errors, []);
});

async function jobsPage(page: Page, s: TestServer, siteUrl: string): Promise<void> {
  // Jobs: names, bars, durations, links to the library; no Retry on a failure a retry cannot cure.
  await page.goto(`${s.url}/#/jobs`);
  const importRow = page.locator('#jobs tbody tr[data-kind=import]').first();
  await importRow.getByText(/^Importing /).waitFor();
  assert.equal(await importRow.locator('progress').count(), 1);
  assert.match((await importRow.locator('td').nth(3).textContent()) ?? '', /\d\s?s/);
  await importRow.getByRole('link', { name: '/pinojs/pino' }).waitFor();
  const crawlRow = page.locator('#jobs tbody tr[data-kind=crawl]').first();
  await crawlRow.getByText(`Crawling ${new URL(siteUrl).host}`).waitFor();
  assert.match((await crawlRow.textContent()) ?? '', /\d+ of \d+ pages/);
  const fetchRow = page.locator(`#jobs tbody tr[data-kind=version-fetch]`).first();
  await fetchRow.getByText('Fetching version 99 of').waitFor();
  assert.equal(await fetchRow.getByRole('button', { name: 'Retry' }).count(), 0);
  assert.ok(await oneLine(page, '#jobs tbody tr td time'), 'a date in a table sits on one line');
}

async function librarySettings(page: Page, s: TestServer, site_: string): Promise<void> {
  // Library settings: an imported library has no schedule; "Saved." stays.
  await page.goto(`${s.url}/#/library/pinojs/pino`);
  await page.locator('#library-admin').waitFor();
  assert.equal(
    await page
      .locator('#library-admin')
      .getByLabel(/Re-crawl schedule/)
      .isVisible(),
    false,
  );
  await page.locator('#library-admin').getByLabel('Description').fill('Fast JSON logger');
  await page.locator('#library-admin').getByRole('button', { name: 'Save', exact: true }).click();
  await page.locator('#library-status', { hasText: 'Saved.' }).waitFor();
  await page.waitForTimeout(800);
  assert.equal(await page.locator('#library-status').textContent(), 'Saved.');
  // A website's schedule: a bad one is refused in words, a good one saved.
  await page.goto(`${s.url}/#/library${site_}`);
  const schedule = page.locator('#library-admin').getByLabel(/Re-crawl schedule/);
  await schedule.waitFor();
  await schedule.fill('every night');
  await page.locator('#library-admin').getByRole('button', { name: 'Save', exact: true }).click();
  await page.locator('#library-status.error', { hasText: 'not a valid cron expression' }).waitFor();
  await schedule.fill('0 3 * * *');
  await page.locator('#library-admin').getByRole('button', { name: 'Save', exact: true }).click();
  await page.locator('#library-status', { hasText: 'Saved.' }).waitFor();
  assert.equal((await json<{ schedule: string | null }>(s, `/api/libraries${site_}`)).schedule, '0 3 * * *');
}

async function addLinksToJobs(page: Page): Promise<void> {
  // Add: the answer links to the Jobs page.
  await page.goto(`${page.url().split('#')[0]}#/add`);
  await page.getByLabel('Bundle (.json or .zip)').setInputFiles(path.join(CORPUS_BUNDLES, 'pino.json'));
  await page.getByLabel('replace libraries that exist').check();
  await page.getByRole('button', { name: 'Import' }).click();
  await page.locator('#bundle-status').getByRole('link', { name: 'Follow it on the Jobs page' }).click();
  await page.locator('#jobs-page').waitFor();
}

async function adminPage(page: Page, s: TestServer): Promise<void> {
  // Admin: a chart with axes drawn by Chart.js, empty states, the audit log naming members and refreshing.
  const ken = await json<{ member: { id: number } }>(s, '/api/v2/members', {
    method: 'POST',
    body: JSON.stringify({ name: 'ken', role: 'member', createKey: false }),
  });
  await page.goto(`${s.url}/#/admin`);
  await page.locator('#usage figure canvas').first().waitFor();
  assert.match((await page.locator('#usage figcaption').first().textContent()) ?? '', /\d+ requests? in 30 days; busiest/);
  assert.equal(
    await page
      .locator('#usage canvas')
      .first()
      .evaluate((c) => (c as HTMLCanvasElement).width > 100),
    true,
  );
  await page.locator('#rules td.empty').waitFor();
  await json(s, `/api/v2/members/${ken.member.id}`, { method: 'PATCH', body: JSON.stringify({ role: 'admin' }) });
  // Made elsewhere (the API), shown without reloading, by name.
  await page.locator('#audit tbody tr', { hasText: 'memberRole' }).filter({ hasText: 'ken' }).first().waitFor({ timeout: 15_000 });
  assert.ok(await oneLine(page, '#audit tbody td time'));
}

async function keyRevokeConfirmed(page: Page, s: TestServer): Promise<void> {
  // Revoking a key asks first: dismissed, nothing happens; accepted, it is revoked.
  await json(s, '/api/v2/keys', { method: 'POST', body: JSON.stringify({ name: 'laptop' }) });
  await page.goto(`${s.url}/#/keys`);
  const keyRow = page.locator('#keys tbody tr', { hasText: 'laptop' });
  const dialogs: string[] = [];
  page.once('dialog', (d) => (dialogs.push(d.message()), void d.dismiss()));
  await keyRow.getByRole('button', { name: 'Revoke' }).click();
  await waitFor(() => dialogs.length === 1 || null);
  assert.match(dialogs[0]!, /Revoke the key "laptop"/);
  assert.equal(await keyRow.getByRole('button', { name: 'Revoke' }).count(), 1);
  page.once('dialog', (d) => void d.accept());
  await keyRow.getByRole('button', { name: 'Revoke' }).click();
  await page.locator('#keys tbody tr', { hasText: 'laptop' }).filter({ hasText: 'revoked' }).waitFor();
}
