import type { Services } from '../server/services.ts';
import type { JobContext } from '../server/jobs/queue.ts';
import { JobCancelled } from '../server/jobs/queue.ts';
import type { LibraryMeta, SnippetInput } from '../lib/model.ts';
import type { VersionBuild } from '../server/ingest/writer.ts';
import type { FrontierEntry } from '../server/store/crawl.ts';
import { checkUrl, type NetPolicy } from '../lib/net/guard.ts';
import { canonicalKey, fetchUrl, inScope, scopeFor, type Scope } from './url.ts';
import { Robots } from './robots.ts';
import { parseSitemap } from './sitemap.ts';
import { decodeHtml, fetchPage, isHtml } from './fetch.ts';
import { BrowserRenderer } from './browser.ts';
import { extractPage, type ExtractedPage } from './extract/index.ts';

/** The job payload of a crawl (kind 'crawl'). */
export interface CrawlPayload {
  libraryId: string;
  startUrl: string;
  maxPages: number;
  /** Link hops from the start URL; null = unlimited (then sitemap.xml also seeds the crawl). */
  maxDepth: number | null;
  excludePatterns: string[];
  name: string | null;
  description: string | null;
  /** null = the server's crawlRespectRobots setting. */
  respectRobots: boolean | null;
  /** Cron expression for re-crawls; undefined keeps the stored one, null removes it. */
  schedule?: string | null;
  trigger: 'api' | 'cli' | 'schedule';
}

export interface CrawlProgress {
  pagesDone: number;
  pagesQueued: number;
  pagesFailed: number;
  pagesSkipped: number;
  pagesDuplicate: number;
  pagesUnchanged: number;
  pagesRendered: number;
  snippets: number;
  errors: { url: string; error: string }[];
  [key: string]: unknown;
}

const MAX_SITEMAPS = 20;

/**
 * Runs (or resumes) one crawl job. The frontier lives in SQLite: after a crash the pages that were
 * in flight are queued again and the job's unfinished library version is continued (snippets the
 * build already holds are skipped by its content hashes), so nothing is lost or stored twice.
 * The new version is swapped in only at the end; a failed or cancelled crawl throws its build away.
 */
export async function runCrawl(s: Services, ctx: JobContext<CrawlPayload>): Promise<void> {
  const p = ctx.job.payload;
  const jobId = ctx.job.id;
  const store = s.store;
  const now = () => new Date().toISOString();
  const policy: NetPolicy = { allowPrivate: s.config.crawlAllowPrivate };
  const timeoutMs = s.config.crawlPageTimeoutMs;
  const scope = scopeFor(p.startUrl, p.excludePatterns);
  const respectRobots = p.respectRobots ?? s.config.crawlRespectRobots;
  await checkUrl(p.startUrl, policy);

  const library = store.libraries.get(p.libraryId);
  const site = library ? store.crawl.site(p.libraryId) : null;
  const meta: LibraryMeta = {
    id: p.libraryId,
    title: p.name ?? library?.title ?? new URL(p.startUrl).host,
    description: p.description ?? library?.description ?? `Documentation crawled from ${p.startUrl}`,
    sourceType: 'website',
    sourceUrl: p.startUrl,
    docsSiteUrl: p.startUrl,
  };
  let build: VersionBuild | null = s.writer.begin(meta, { tag: '', jobId, resume: true });
  const renderer = new BrowserRenderer({ executablePath: s.config.chromiumPath, policy, timeoutMs, maxPages: s.config.crawlConcurrency, log: ctx.log });
  let siteName: string | null = site?.siteTitle ?? null;

  const checkCancelled = () => {
    if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new JobCancelled('cancelled');
    // A cancel requested from another process (the CLI) shows only in the job row.
    if (store.jobs.isCancelRequested(jobId)) throw new JobCancelled('cancelled');
  };

  const progress = (): CrawlProgress => {
    const c = store.crawl.counts(jobId);
    return {
      pagesDone: c.done + c.unchanged + c.duplicate, pagesQueued: c.queued + c.processing, pagesFailed: c.failed, pagesSkipped: c.skipped,
      pagesDuplicate: c.duplicate, pagesUnchanged: c.unchanged, pagesRendered: renderer.rendered, snippets: build?.snippetCount ?? 0,
      errors: store.crawl.errors(jobId, 10), libraryId: p.libraryId, startUrl: p.startUrl,
    };
  };
  let lastProgress = 0;
  const report = (force = false) => {
    if (!force && Date.now() - lastProgress < 250) return;
    lastProgress = Date.now();
    ctx.progress(progress());
  };

  try {
    const requeued = store.crawl.requeueProcessing(jobId, now());
    if (requeued > 0) ctx.log.info({ requeued }, 'crawl resumed; pages in flight queued again');

    const robots = respectRobots ? await loadRobots(scope, policy, timeoutMs, ctx.signal, ctx.log) : Robots.allowAll();
    const allowed = (key: string) => {
      const u = new URL(key);
      return robots.allows(`${u.pathname}${u.search}`);
    };

    /** Adds in-scope links of a page to the frontier (depth limit, robots, exclusions, maxPages). */
    const follow = (links: string[], depth: number, via: string) => {
      if (p.maxDepth !== null && depth > p.maxDepth) return;
      for (const link of links) {
        const key = canonicalKey(link);
        const url = fetchUrl(link);
        if (!key || !url || !inScope(key, scope)) continue;
        if (!allowed(key)) {
          store.crawl.recordSkipped(jobId, key, url, depth, 'disallowed by robots.txt', now());
          continue;
        }
        store.crawl.admit(jobId, key, url, depth, via, p.maxPages, now());
      }
    };

    // Seeding is idempotent (known URLs are ignored), so a resumed job simply seeds again.
    const startKey = canonicalKey(p.startUrl)!;
    store.crawl.admit(jobId, startKey, fetchUrl(p.startUrl)!, 0, 'start', p.maxPages, now());
    if (p.maxDepth === null) {
      const urls = await sitemapUrls(scope, robots, policy, timeoutMs, ctx.signal, ctx.log);
      follow(urls, 1, 'sitemap');
    }
    report(true);

    const processEntry = async (e: FrontierEntry) => {
      const previous = store.crawl.page(p.libraryId, e.urlKey);
      let extracted: ExtractedPage;
      let render: 'http' | 'browser' | 'cache' = 'http';
      let httpStatus = 0;
      let etag: string | null = null;
      let lastModified: string | null = null;
      let pageUrl = e.url;
      const conditional = previous && previous.render === 'http' && previous.snippetsJson !== '[]';
      const res = await fetchPage(e.url, { policy, timeoutMs, signal: ctx.signal, etag: conditional ? previous.etag : null, lastModified: conditional ? previous.lastModified : null });
      httpStatus = res.status;
      if (res.status === 304 && previous) {
        // Unchanged since the last crawl: reuse what was extracted then, and still follow its links.
        follow(previous.links, e.depth + 1, 'link');
        const snippets = JSON.parse(previous.snippetsJson) as SnippetInput[];
        const dup = previous.contentHash ? store.crawl.claimContentHash(e.id, jobId, previous.contentHash) : null;
        if (dup) return store.crawl.finish(e.id, 'duplicate', { httpStatus, render: 'cache', error: `same content as ${dup}` }, now());
        const added = await build!.add(snippets);
        return store.crawl.finish(e.id, 'unchanged', { httpStatus, render: 'cache', snippets: added }, now());
      }
      if (res.status >= 400) return store.crawl.finish(e.id, 'failed', { httpStatus, error: `HTTP ${res.status}` }, now());
      if (res.status >= 300) return store.crawl.finish(e.id, 'failed', { httpStatus, error: `HTTP ${res.status} without a usable redirect` }, now());
      const finalKey = canonicalKey(res.url);
      if (finalKey && finalKey !== e.urlKey) {
        if (!inScope(finalKey, scope)) return store.crawl.finish(e.id, 'skipped', { httpStatus, error: `redirected out of scope to ${res.url}` }, now());
        if (store.crawl.has(jobId, finalKey)) return store.crawl.finish(e.id, 'duplicate', { httpStatus, error: `redirects to ${res.url}` }, now());
        pageUrl = res.url;
      }
      if (!isHtml(res.contentType, res.body)) return store.crawl.finish(e.id, 'skipped', { httpStatus, error: `not HTML (${res.contentType || 'no content type'})` }, now());
      etag = res.etag;
      lastModified = res.lastModified;
      extracted = extractPage(decodeHtml(res.body, res.contentType), pageUrl);
      if (extracted.wantsBrowser) {
        // The server sent an application shell: render it like a reader's browser would.
        const rendered = await renderer.render(res.url, ctx.signal);
        render = 'browser';
        httpStatus = rendered.status;
        if (rendered.status >= 400) return store.crawl.finish(e.id, 'failed', { httpStatus, render, error: `HTTP ${rendered.status}` }, now());
        extracted = extractPage(rendered.html, pageUrl);
      }
      if (!siteName && e.depth === 0 && extracted.siteName) siteName = extracted.siteName;
      if (extracted.softNotFound) return store.crawl.finish(e.id, 'skipped', { httpStatus, render, error: 'page not found (soft 404)' }, now());
      follow(extracted.links, e.depth + 1, 'link');
      if (extracted.noindex) return store.crawl.finish(e.id, 'skipped', { httpStatus, render, error: 'noindex' }, now());
      const dup = store.crawl.claimContentHash(e.id, jobId, extracted.contentHash);
      if (dup) return store.crawl.finish(e.id, 'duplicate', { httpStatus, render, error: `same content as ${dup}` }, now());
      const added = await build!.add(extracted.snippets);
      store.crawl.savePage(p.libraryId, {
        url: e.urlKey, etag, lastModified, contentHash: extracted.contentHash, render, title: extracted.pageTitle,
        links: extracted.links, snippetsJson: JSON.stringify(extracted.snippets), fetchedAt: now(),
      });
      const unchanged = previous?.contentHash === extracted.contentHash;
      store.crawl.finish(e.id, unchanged ? 'unchanged' : 'done', { httpStatus, render, snippets: added }, now());
    };

    // Workers take URLs from the durable frontier until it is empty and nobody can add more.
    let active = 0;
    let wake: (() => void) | null = null;
    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const worker = async () => {
      for (;;) {
        checkCancelled();
        const entry = store.crawl.claim(jobId, now());
        if (!entry) {
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
        active++;
        try {
          await processEntry(entry);
        } catch (err) {
          if (ctx.signal.aborted || err instanceof JobCancelled) throw err;
          const message = err instanceof Error ? err.message : String(err);
          ctx.log.debug({ url: entry.url, err: message }, 'page failed');
          store.crawl.finish(entry.id, 'failed', { error: message.slice(0, 500) }, now());
        } finally {
          active--;
          report();
          notify();
        }
      }
    };
    const workers = Array.from({ length: s.config.crawlConcurrency }, () => worker());
    const results = await Promise.allSettled(workers);
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;

    const final = progress();
    ctx.progress(final);
    if (build!.snippetCount === 0) {
      const first = final.errors[0];
      throw new Error(`Nothing could be indexed from ${p.startUrl}${first ? `: ${first.url}: ${first.error}` : ' (no documentation content found)'}.`);
    }
    // Continue the same build with the final metadata (the site name is known only now), then swap it in.
    const finalMeta: LibraryMeta = { ...meta, title: p.name ?? library?.title ?? siteName ?? meta.title };
    build = s.writer.begin(finalMeta, { tag: '', jobId, resume: true });
    const totals = build.commit();
    store.crawl.saveSite(
      {
        libraryId: p.libraryId, startUrl: p.startUrl, schedule: p.schedule,
        options: { maxPages: p.maxPages, maxDepth: p.maxDepth, excludePatterns: p.excludePatterns, respectRobots: p.respectRobots, name: p.name, description: p.description },
        siteTitle: siteName, lastJobId: jobId, lastCrawledAt: now(),
      },
      now(),
    );
    store.crawl.purgeFinishedFrontiers(p.libraryId, jobId);
    store.crawl.prunePages(p.libraryId, jobId);
    if (p.schedule !== undefined) s.crawler.schedulesChanged();
    ctx.progress({ ...progress(), snippets: totals.snippets, tokens: totals.tokens });
    ctx.log.info({ libraryId: p.libraryId, pages: final.pagesDone, snippets: totals.snippets }, 'crawl finished');
  } catch (err) {
    // A shutdown leaves the build for the resumed job; a cancel or a failure throws it away so the
    // previous version stays served.
    const shutdown = ctx.signal.aborted && !(ctx.signal.reason instanceof JobCancelled) && !(err instanceof JobCancelled);
    if (!shutdown) build?.abort();
    try {
      ctx.progress(progress());
    } catch {
      /* the store may be closing */
    }
    throw err;
  } finally {
    await renderer.close();
  }
}

async function loadRobots(scope: Scope, policy: NetPolicy, timeoutMs: number, signal: AbortSignal, log: JobContext<unknown>['log']): Promise<Robots> {
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
async function sitemapUrls(scope: Scope, robots: Robots, policy: NetPolicy, timeoutMs: number, signal: AbortSignal, log: JobContext<unknown>['log']): Promise<string[]> {
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
      const text = res.body.toString('utf8');
      if (!/<(urlset|sitemapindex)[\s>]/i.test(text)) continue;
      const parsed = parseSitemap(text);
      urls.push(...parsed.urls);
      queue.push(...parsed.sitemaps);
    } catch (err) {
      if (signal.aborted) throw err;
      log.debug({ sitemap: next, err: (err as Error).message }, 'sitemap not readable');
    }
  }
  return urls;
}
