import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './server.ts';

/** Debian's Chromium for the page tests: headless, no sandbox or GPU, no calls home; `extraArgs` add to those. */
export function launchBrowser(executablePath: string, extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs] });
}

const SHOTS = path.join(ROOT, 'docs/screenshots');

/** With UPDATE_SCREENSHOTS=1, writes docs/screenshots/<name>.png (linked from the README and docs/console.md). */
export async function shot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/**
 * On the console's Add page (open in `page`): imports the bundle file `bundle` for the whole instance and
 * starts a crawl of the fixture site `siteUrl` (4 pages); resolves once both are accepted.
 */
export async function importAndCrawl(page: Page, bundle: string, siteUrl: string): Promise<void> {
  await page.getByLabel('Who may read what you add').selectOption('instance');
  await page.getByLabel('Bundle (.json or .zip)').setInputFiles(bundle);
  await page.getByRole('button', { name: 'Import' }).click();
  await page.locator('#bundle-status', { hasText: '1 library queued for import' }).waitFor();
  const crawl = page.locator('#add-crawl');
  await crawl.getByLabel('Start URL').fill(`${siteUrl}/static/`);
  await crawl.getByLabel('Max pages').fill('4');
  await page.getByRole('button', { name: 'Crawl' }).click();
  await page.locator('#crawl-status', { hasText: 'Follow it on the Jobs page' }).waitFor();
}
