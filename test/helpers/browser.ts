import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium for the page tests: headless, no sandbox or GPU, no calls home; `extraArgs` add to those. */
export function launchBrowser(executablePath: string, extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs] });
}
