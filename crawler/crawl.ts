import type { SnippetInput } from '../lib/model.ts';
import type { NetPolicy } from '../lib/net/guard.ts';
import { canonicalKey, fetchUrl, inScope, type Scope } from './url.ts';
import { Robots } from './robots.ts';
import { parseSitemap } from './sitemap.ts';
import { decodeHtml, fetchPage, isHtml } from './fetch.ts';
import { extractPage, type ExtractedPage } from './extract/index.ts';
import type { CrawlFrontier, CrawlLog, FrontierEntry, PageRenderer, SnippetSink } from './types.ts';

const MAX_SITEMAPS = 20;

/** What to crawl. */
export interface SiteCrawlOptions {
  jobId: number;
  libraryId: string;
  startUrl: string;
  /** The crawl's scope (url.ts scopeFor: origin, folder, exclude patterns). */
  scope: Scope;
  maxPages: number;
  /** Link hops from the start URL; null = unlimited (then sitemap.xml also seeds the crawl). */
  maxDepth: number | null;
  respectRobots: boolean;
  policy: NetPolicy;
  timeoutMs: number;
  /** Pages fetched at once. */
  concurrency: number;
  /** The site's name known from an earlier crawl; null: taken from the start page. */
  siteName: string | null;
}

/** What the crawl is given by its caller (the website source's job). */
export interface SiteCrawlDeps {
  frontier: CrawlFrontier;
  sink: SnippetSink;
  renderer: PageRenderer;
  signal: AbortSignal;
  log: CrawlLog;
  /** Throws when the crawl was cancelled; checked before each page. */
  checkCancelled(): void;
  /** Reports progress; called after each page, and with force after seeding. */
  report(force?: boolean): void;
  /** True for an error that ends the whole crawl (a cancel) rather than one page. */
  isCancellation(err: unknown): boolean;
}

/**
 * Crawls (or resumes crawling) one site into the sink: robots.txt, sitemap seeding, then workers
 * over the durable frontier until it is empty and nobody can add more. Each page is fetched (or
 * rendered when the server sends an application shell), extracted, deduplicated by content and
 * added to the sink. Returns the site's name. Throws when cancelled; a page that fails is recorded.
 */
export async function crawlSite(options: SiteCrawlOptions, deps: SiteCrawlDeps): Promise<{ siteName: string | null }> {
  const crawl = new SiteCrawl(options, deps);
  await crawl.run();
  return { siteName: crawl.siteName };
}

const now = () => new Date().toISOString();

class SiteCrawl {
  siteName: string | null;
  private robots = Robots.allowAll();

  constructor(
    private readonly o: SiteCrawlOptions,
    private readonly d: SiteCrawlDeps,
  ) {
    this.siteName = o.siteName;
  }

  async run(): Promise<void> {
    const { o, d } = this;
    const requeued = await d.frontier.requeueProcessing(o.jobId, now());
    if (requeued > 0) d.log.info({ requeued }, 'crawl resumed; pages in flight queued again');
    this.robots = o.respectRobots ? await loadRobots(o.scope, o.policy, o.timeoutMs, d.signal, d.log) : Robots.allowAll();

    // Seeding is idempotent (known URLs are ignored), so a resumed job simply seeds again.
    const startKey = canonicalKey(o.startUrl)!;
    await d.frontier.admit(o.jobId, startKey, fetchUrl(o.startUrl)!, 0, 'start', o.maxPages, now());
    if (o.maxDepth === null) {
      const urls = await sitemapUrls(o.scope, this.robots, o.policy, o.timeoutMs, d.signal, d.log);
      await this.follow(urls, 1, 'sitemap');
    }
    d.report(true);
    await this.runWorkers();
  }

  private allowed(key: string): boolean {
    const u = new URL(key);
    return this.robots.allows(`${u.pathname}${u.search}`);
  }

  /** Adds in-scope links of a page to the frontier (depth limit, robots, exclusions, maxPages). */
  private async follow(links: string[], depth: number, via: string): Promise<void> {
    const { o, d } = this;
    if (o.maxDepth !== null && depth > o.maxDepth) return;
    for (const link of links) {
      const key = canonicalKey(link);
      const url = fetchUrl(link);
      if (!key || !url || !inScope(key, o.scope)) continue;
      if (!this.allowed(key)) {
        await d.frontier.recordSkipped(o.jobId, key, url, depth, 'disallowed by robots.txt', now());
        continue;
      }
      await d.frontier.admit(o.jobId, key, url, depth, via, o.maxPages, now());
    }
  }

  private async processEntry(e: FrontierEntry): Promise<void> {
    const { o, d } = this;
    const frontier = d.frontier;
    const jobId = o.jobId;
    const previous = await frontier.page(o.libraryId, e.urlKey);
    let extracted: ExtractedPage;
    let render: 'http' | 'browser' | 'cache' = 'http';
    let httpStatus = 0;
    let etag: string | null = null;
    let lastModified: string | null = null;
    let pageUrl = e.url;
    const conditional = previous && previous.render === 'http' && previous.snippetsJson !== '[]';
    const res = await fetchPage(e.url, {
      policy: o.policy,
      timeoutMs: o.timeoutMs,
      signal: d.signal,
      etag: conditional ? previous.etag : null,
      lastModified: conditional ? previous.lastModified : null,
    });
    httpStatus = res.status;
    if (res.status === 304 && previous) {
      // Unchanged since the last crawl: reuse what was extracted then, and still follow its links.
      await this.follow(previous.links, e.depth + 1, 'link');
      const snippets = JSON.parse(previous.snippetsJson) as SnippetInput[];
      const dup = previous.contentHash ? await frontier.claimContentHash(e.id, jobId, previous.contentHash) : null;
      if (dup) return frontier.finish(e.id, 'duplicate', { httpStatus, render: 'cache', error: `same content as ${dup}` }, now());
      const added = await d.sink.add(snippets);
      return frontier.finish(e.id, 'unchanged', { httpStatus, render: 'cache', snippets: added }, now());
    }
    if (res.status >= 400) return frontier.finish(e.id, 'failed', { httpStatus, error: `HTTP ${res.status}` }, now());
    if (res.status >= 300) return frontier.finish(e.id, 'failed', { httpStatus, error: `HTTP ${res.status} without a usable redirect` }, now());
    const finalKey = canonicalKey(res.url);
    if (finalKey && finalKey !== e.urlKey) {
      if (!inScope(finalKey, o.scope)) return frontier.finish(e.id, 'skipped', { httpStatus, error: `redirected out of scope to ${res.url}` }, now());
      if (await frontier.has(jobId, finalKey)) return frontier.finish(e.id, 'duplicate', { httpStatus, error: `redirects to ${res.url}` }, now());
      pageUrl = res.url;
    }
    if (!isHtml(res.contentType, res.body))
      return frontier.finish(e.id, 'skipped', { httpStatus, error: `not HTML (${res.contentType || 'no content type'})` }, now());
    etag = res.etag;
    lastModified = res.lastModified;
    extracted = extractPage(decodeHtml(res.body, res.contentType), pageUrl);
    if (extracted.wantsBrowser) {
      // The server sent an application shell: render it like a reader's browser would.
      const rendered = await d.renderer.render(res.url, d.signal);
      render = 'browser';
      httpStatus = rendered.status;
      if (rendered.status >= 400) return frontier.finish(e.id, 'failed', { httpStatus, render, error: `HTTP ${rendered.status}` }, now());
      extracted = extractPage(rendered.html, pageUrl);
    }
    if (!this.siteName && e.depth === 0 && extracted.siteName) this.siteName = extracted.siteName;
    if (extracted.softNotFound) return frontier.finish(e.id, 'skipped', { httpStatus, render, error: 'page not found (soft 404)' }, now());
    await this.follow(extracted.links, e.depth + 1, 'link');
    if (extracted.noindex) return frontier.finish(e.id, 'skipped', { httpStatus, render, error: 'noindex' }, now());
    const dup = await frontier.claimContentHash(e.id, jobId, extracted.contentHash);
    if (dup) return frontier.finish(e.id, 'duplicate', { httpStatus, render, error: `same content as ${dup}` }, now());
    const added = await d.sink.add(extracted.snippets);
    await frontier.savePage(o.libraryId, {
      url: e.urlKey,
      etag,
      lastModified,
      contentHash: extracted.contentHash,
      render,
      title: extracted.pageTitle,
      links: extracted.links,
      snippetsJson: JSON.stringify(extracted.snippets),
      fetchedAt: now(),
    });
    const unchanged = previous?.contentHash === extracted.contentHash;
    await frontier.finish(e.id, unchanged ? 'unchanged' : 'done', { httpStatus, render, snippets: added }, now());
  }

  /** Workers take URLs from the durable frontier until it is empty and nobody can add more. */
  private async runWorkers(): Promise<void> {
    const { o, d } = this;
    let active = 0;
    let wake: (() => void) | null = null;
    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const worker = async () => {
      for (;;) {
        d.checkCancelled();
        // A claim in flight counts as active: a worker that finds the frontier empty meanwhile must not stop the crawl.
        active++;
        const entry = await d.frontier.claim(o.jobId, now());
        if (!entry) {
          active--;
          if (active === 0) return notify();
          await new Promise<void>((resolve) => {
            const prev = wake;
            wake = () => {
              prev?.();
              resolve();
            };
          });
          continue;
        }
        try {
          await this.processEntry(entry);
        } catch (err) {
          if (d.signal.aborted || d.isCancellation(err)) throw err;
          const message = err instanceof Error ? err.message : String(err);
          d.log.debug({ url: entry.url, err: message }, 'page failed');
          await d.frontier.finish(entry.id, 'failed', { error: message.slice(0, 500) }, now());
        } finally {
          active--;
          d.report();
          notify();
        }
      }
    };
    const workers = Array.from({ length: o.concurrency }, () => worker());
    const results = await Promise.allSettled(workers);
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
  }
}

async function loadRobots(scope: Scope, policy: NetPolicy, timeoutMs: number, signal: AbortSignal, log: CrawlLog): Promise<Robots> {
  try {
    const res = await fetchPage(`${scope.origin}/robots.txt`, { policy, timeoutMs, signal, accept: 'text/plain,*/*', maxBytes: 512 * 1024 });
    if (res.status >= 200 && res.status < 300) return Robots.parse(res.body.toString('utf8'));
  } catch (err) {
    if (signal.aborted) throw err;
    log.debug({ err: (err as Error).message }, 'robots.txt not readable; crawling without it');
  }
  return Robots.allowAll();
}

/** Page URLs from sitemap.xml (robots.txt `Sitemap:` lines, the scope's folder, the site root), nested indexes included. */
async function sitemapUrls(scope: Scope, robots: Robots, policy: NetPolicy, timeoutMs: number, signal: AbortSignal, log: CrawlLog): Promise<string[]> {
  const queue = [...robots.sitemaps, `${scope.origin}${scope.prefix}/sitemap.xml`, `${scope.origin}/sitemap.xml`];
  const seen = new Set<string>();
  const urls: string[] = [];
  while (queue.length && seen.size < MAX_SITEMAPS) {
    const next = queue.shift()!;
    if (seen.has(next)) continue;
    seen.add(next);
    try {
      if (new URL(next).origin !== scope.origin) continue;
      const res = await fetchPage(next, { policy, timeoutMs, signal, accept: 'application/xml,text/xml,*/*', maxBytes: 20 * 1024 * 1024 });
      if (res.status !== 200) continue;
      const parsed = parseSitemap(res.body.toString('utf8'));
      if (parsed.warning) log.warn({ sitemap: next, problem: parsed.warning }, 'sitemap ignored');
      urls.push(...parsed.urls);
      queue.push(...parsed.sitemaps);
    } catch (err) {
      if (signal.aborted) throw err;
      log.debug({ sitemap: next, err: (err as Error).message }, 'sitemap not readable');
    }
  }
  return urls;
}
