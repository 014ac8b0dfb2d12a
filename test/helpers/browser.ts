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
