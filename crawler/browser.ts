import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';
import { checkUrl, type NetPolicy } from '../server/net/guard.ts';
import type { Logger } from '../server/log.ts';
import { USER_AGENT } from './fetch.ts';

/** Chromium flags for a server without a display, sandbox or GPU, and with no calls home. */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage', '--disable-extensions',
  '--disable-component-update', '--disable-default-apps', '--disable-sync', '--metrics-recording-only', '--no-first-run', '--mute-audio',
  '--disable-features=Translate,MediaRouter,OptimizationHints', '--blink-settings=imagesEnabled=false',
];

/** Resource types never loaded: they cost time and memory and carry no documentation text. */
const BLOCKED_TYPES = new Set(['image', 'font', 'media', 'imageset', 'texttrack', 'manifest', 'eventsource', 'websocket', 'beacon', 'ping']);

export interface RenderedPage {
  status: number;
  url: string;
  html: string;
}

export interface RendererOptions {
  executablePath: string;
  policy: NetPolicy;
  timeoutMs: number;
  /** Pages open at once. */
  maxPages: number;
  log: Logger;
}

/**
 * One Chromium per crawl worker, started on first use and reused for every page; a bounded
 * number of tabs at once. Every request the page makes passes the same SSRF guard as the crawler's
 * own fetches; images, fonts and media are refused.
 */
export class BrowserRenderer {
  private browser: Promise<Browser> | null = null;
  private context: Promise<BrowserContext> | null = null;
  private open = 0;
  private waiting: (() => void)[] = [];
  private checked = new Map<string, Promise<boolean>>();
  rendered = 0;

  constructor(private readonly opts: RendererOptions) {}

  async render(url: string, signal?: AbortSignal): Promise<RenderedPage> {
    await this.slot();
    let page: Page | null = null;
    const onAbort = () => void page?.close().catch(() => undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const context = await this.ensureContext();
      page = await context.newPage();
      let inflight = 0;
      let lastActivity = Date.now();
      page.on('request', () => {
        inflight++;
        lastActivity = Date.now();
      });
      const done = () => {
        inflight = Math.max(0, inflight - 1);
        lastActivity = Date.now();
      };
      page.on('requestfinished', done);
      page.on('requestfailed', done);
      const response = await page.goto(url, { waitUntil: 'domcontentloaded', timeout: this.opts.timeoutMs });
      await waitForQuiet(page, () => inflight, () => lastActivity, Math.min(this.opts.timeoutMs, 15_000));
      const html = await page.content();
      this.rendered++;
      return { status: response?.status() ?? 200, url: page.url(), html };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (page) await page.close().catch(() => undefined);
      this.release();
    }
  }

  async close(): Promise<void> {
    const b = this.browser;
    this.browser = null;
    this.context = null;
    if (b) await (await b.catch(() => null))?.close().catch(() => undefined);
  }

  /** Process id of the browser, for memory measurements. */
  async pid(): Promise<number | null> {
    if (!this.browser) return null;
    const b = await this.browser.catch(() => null);
    const proc = (b as unknown as { process?: () => { pid?: number } | null } | null)?.process?.();
    return proc?.pid ?? null;
  }

  private ensureContext(): Promise<BrowserContext> {
    if (!this.browser) {
      this.browser = chromium.launch({ executablePath: this.opts.executablePath, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 });
      this.browser.then(
        (b) => b.on('disconnected', () => {
          // A crashed browser is started again on the next page.
          this.browser = null;
          this.context = null;
        }),
        () => {
          this.browser = null;
          this.context = null;
        },
      );
      this.context = null;
    }
    if (!this.context) {
      const browser = this.browser;
      this.context = (async () => {
        const b = await browser;
        const ctx = await b.newContext({ userAgent: USER_AGENT, serviceWorkers: 'block', acceptDownloads: false, javaScriptEnabled: true, bypassCSP: false });
        await ctx.route('**/*', (route) => this.guard(route));
        return ctx;
      })();
      this.context.catch(() => (this.context = null));
    }
    return this.context;
  }

  private async guard(route: Route): Promise<void> {
    const req = route.request();
    if (BLOCKED_TYPES.has(req.resourceType())) return route.abort('blockedbyclient').catch(() => undefined);
    const url = req.url();
    if (/^(data|blob):/i.test(url)) return route.continue().catch(() => undefined);
    if (await this.allowed(url)) return route.continue().catch(() => undefined);
    this.opts.log.debug({ url }, 'browser request refused by the network guard');
    return route.abort('blockedbyclient').catch(() => undefined);
  }

  /** Guard verdicts are cached per origin for the life of the renderer (one crawl). */
  private allowed(url: string): Promise<boolean> {
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return Promise.resolve(false);
    }
    let verdict = this.checked.get(origin);
    if (!verdict) {
      verdict = checkUrl(url, this.opts.policy).then(
        () => true,
        () => false,
      );
      this.checked.set(origin, verdict);
    }
    return verdict;
  }

  private async slot(): Promise<void> {
    while (this.open >= this.opts.maxPages) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.open++;
  }

  private release(): void {
    this.open--;
    this.waiting.shift()?.();
  }
}

/**
 * Waits until the page has settled: no request in flight and the DOM unchanged for a short
 * quiet period (client-side rendering finished), or the time limit passes.
 */
async function waitForQuiet(page: Page, inflight: () => number, lastActivity: () => number, limitMs: number): Promise<void> {
  const QUIET_MS = 250;
  const deadline = Date.now() + limitMs;
  let lastSize = -1;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 60));
    const size = await page.evaluate(() => (document.body ? document.body.innerHTML.length : 0)).catch(() => -2);
    if (size === -2) return;
    const now = Date.now();
    if (size !== lastSize) {
      lastSize = size;
      stableSince = now;
      continue;
    }
    if (inflight() === 0 && now - stableSince >= QUIET_MS && now - lastActivity() >= QUIET_MS && size > 0) return;
  }
}
