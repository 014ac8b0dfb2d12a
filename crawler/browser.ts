import type { Browser, BrowserContext, Page, Request, Response, Route } from 'playwright-core';
import { checkUrl, MAX_REDIRECTS, type NetPolicy } from '../lib/net/guard.ts';
import { USER_AGENT } from './fetch.ts';
import type { CrawlLog } from './types.ts';

/** Chromium flags for a server without a display, sandbox or GPU, and with no calls home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-dev-shm-usage',
  '--disable-extensions',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-sync',
  '--metrics-recording-only',
  '--no-first-run',
  '--mute-audio',
  '--disable-features=Translate,MediaRouter,OptimizationHints',
  '--blink-settings=imagesEnabled=false',
  '--no-zygote',
  '--in-process-gpu',
  '--disable-software-rasterizer',
  '--dns-prefetch-disable',
];

/** Resource types never loaded: they cost time and memory and carry no documentation text. */
const BLOCKED_TYPES = new Set(['image', 'font', 'media', 'imageset', 'texttrack', 'manifest', 'eventsource', 'websocket', 'beacon', 'ping']);

export interface RenderedPage {
  status: number;
  url: string;
  html: string;
}

interface Tab {
  page: Page;
  context: BrowserContext;
  inflight: number;
  lastActivity: number;
  uses: number;
  /** Where the last main-frame navigation was redirected to (followed by render(), after the guard). */
  redirect: string | null;
}

/** A tab is replaced after this many pages, so renderer memory that pages leave behind is returned. */
const TAB_REUSE = 50;

export interface RendererOptions {
  executablePath: string;
  policy: NetPolicy;
  timeoutMs: number;
  /** Pages open at once. */
  maxPages: number;
  log: CrawlLog;
  /** The guard applied to every request (default: checkUrl with the policy); rejects to refuse. */
  check?: (url: string) => Promise<unknown>;
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
  private idle: Tab[] = [];
  private tabs = new WeakMap<Page, Tab>();
  private currentContext: BrowserContext | null = null;
  rendered = 0;

  constructor(private readonly opts: RendererOptions) {}

  async render(url: string, signal?: AbortSignal): Promise<RenderedPage> {
    await this.slot();
    let tab: Tab | null = null;
    const onAbort = () => void tab?.page.close().catch(() => undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    let reusable = false;
    try {
      tab = this.idle.pop() ?? (await this.newTab());
      tab.inflight = 0;
      tab.lastActivity = Date.now();
      let target = url;
      let response: Response | null = null;
      for (let hop = 0; ; hop++) {
        tab.redirect = null;
        response = await tab.page.goto(target, { waitUntil: 'domcontentloaded', timeout: this.opts.timeoutMs });
        if (!tab.redirect) break;
        if (hop >= MAX_REDIRECTS) throw new Error(`Too many redirects (more than ${MAX_REDIRECTS}) starting at ${url}`);
        target = tab.redirect;
      }
      const t = tab;
      await waitForQuiet(
        t.page,
        () => t.inflight,
        () => t.lastActivity,
        Math.min(this.opts.timeoutMs, 15_000),
      );
      const html = await t.page.content();
      this.rendered++;
      reusable = true;
      return { status: response?.status() ?? 200, url: t.page.url(), html };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Tabs are reused for the next page (a new tab costs a renderer start); one that failed is closed.
      if (tab && reusable && ++tab.uses < TAB_REUSE && !tab.page.isClosed() && tab.context === this.currentContext) this.idle.push(tab);
      else if (tab) await tab.page.close().catch(() => undefined);
      this.release();
    }
  }

  private async newTab(): Promise<Tab> {
    const context = await this.ensureContext();
    const page = await context.newPage();
    const tab: Tab = { page, context, inflight: 0, lastActivity: Date.now(), uses: 0, redirect: null };
    this.tabs.set(page, tab);
    page.on('request', () => {
      tab.inflight++;
      tab.lastActivity = Date.now();
    });
    const done = () => {
      tab.inflight = Math.max(0, tab.inflight - 1);
      tab.lastActivity = Date.now();
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
    return tab;
  }

  async close(): Promise<void> {
    const b = this.browser;
    this.browser = null;
    this.context = null;
    this.idle = [];
    this.currentContext = null;
    if (b) await (await b.catch(() => null))?.close().catch(() => undefined);
  }

  private ensureContext(): Promise<BrowserContext> {
    if (!this.browser) {
      // All tabs (one site) share one renderer process: measured about 130 MB less peak memory than
      // two tabs per renderer and no slower on 2 cores, which matters on the small boxes this runs on.
      const args = [...CHROMIUM_ARGS, '--renderer-process-limit=1'];
      // playwright-core takes most of a second to load: only a crawl that renders pages pays for it.
      this.browser = import('playwright-core').then(({ chromium }) =>
        chromium.launch({ executablePath: this.opts.executablePath, args, headless: true, timeout: 30_000 }),
      );
      this.browser.then(
        (b) =>
          b.on('disconnected', () => {
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
        // WebSockets do not pass through route(); documentation pages do not need them.
        await ctx.routeWebSocket(/.*/, (ws) => ws.close());
        await ctx.addInitScript(MUTATION_TRACKER);
        this.currentContext = ctx;
        this.idle = [];
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
    if (!(await this.allowed(url))) {
      this.opts.log.debug({ url }, 'browser request refused by the network guard');
      return route.abort('blockedbyclient').catch(() => undefined);
    }
    // The request is made here rather than continued in the browser: Chromium follows redirects
    // without asking route() again, so a checked URL could redirect to a refused address. Handed a
    // 3xx, the browser requests the Location itself, and that request comes through this guard.
    try {
      const response = await route.fetch({ maxRedirects: 0, maxRetries: 0, timeout: this.opts.timeoutMs });
      const location = response.status() >= 300 && response.status() < 400 ? response.headers()['location'] : undefined;
      if (location && req.isNavigationRequest()) {
        // Chromium follows a navigation's redirect without asking route() again: stop here and let
        // render() navigate to the target itself, so every hop is checked.
        const tab = this.tabOf(req);
        if (tab && req.frame() === tab.page.mainFrame()) {
          tab.redirect = new URL(location, url).href;
          // An empty page rather than an abort: aborted navigations leave Chromium's error page, which was seen to stall closing the tab.
          return route.fulfill({ status: 200, contentType: 'text/html', body: '' }).catch(() => undefined);
        }
        return route.abort('blockedbyclient').catch(() => undefined);
      }
      await route.fulfill({ response });
    } catch (err) {
      this.opts.log.debug({ url, err: (err as Error).message }, 'browser request failed');
      await route.abort('failed').catch(() => undefined);
    }
  }

  private tabOf(req: Request): Tab | undefined {
    try {
      return this.tabs.get(req.frame().page());
    } catch {
      return undefined; // service worker requests have no frame
    }
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
      verdict = (this.opts.check ?? ((u: string) => checkUrl(u, this.opts.policy)))(url).then(
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

/** Installed in every page: remembers when the DOM last changed, so settling is checked without polling the DOM size. */
const MUTATION_TRACKER = `(() => {
  window.__stacksLastMutation = performance.now();
  const start = () => new MutationObserver(() => { window.__stacksLastMutation = performance.now(); })
    .observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  if (document.documentElement) start(); else document.addEventListener('readystatechange', start, { once: true });
})();`;

/**
 * Waits until the page has settled: no request in flight and the DOM unchanged for a short
 * quiet period (client-side rendering finished), or the time limit passes. A page that shows no
 * text yet is not settled: a client-rendered app writes nothing until its data has arrived and
 * been rendered, and on a loaded machine that can take longer than the quiet period after the
 * last response (the likely cause of a large page once indexed empty in a loaded test run).
 * Such a page gets up to BLANK_WAIT_MS more.
 */
async function waitForQuiet(page: Page, inflight: () => number, lastActivity: () => number, limitMs: number): Promise<void> {
  const QUIET_MS = 150;
  const BLANK_WAIT_MS = 5_000;
  const deadline = Date.now() + limitMs;
  let blankSince = 0;
  while (Date.now() < deadline) {
    const networkQuietFor = inflight() === 0 ? Date.now() - lastActivity() : 0;
    if (networkQuietFor < QUIET_MS) {
      await new Promise((r) => setTimeout(r, Math.max(20, QUIET_MS - networkQuietFor)));
      continue;
    }
    const state = await page
      .evaluate(() => ({
        quietFor: performance.now() - ((window as unknown as { __stacksLastMutation?: number }).__stacksLastMutation ?? 0),
        blank: !document.body || document.body.innerText.trim() === '',
      }))
      .catch(() => null);
    if (!state) return;
    if (state.quietFor < QUIET_MS) {
      await new Promise((r) => setTimeout(r, Math.max(20, QUIET_MS - state.quietFor)));
      continue;
    }
    if (!state.blank) return;
    blankSince ||= Date.now();
    if (Date.now() - blankSince >= BLANK_WAIT_MS) return;
    await new Promise((r) => setTimeout(r, QUIET_MS));
  }
}
