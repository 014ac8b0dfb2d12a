import type { SnippetInput } from '../lib/model.ts';

/**
 * The interfaces the crawler declares and its caller implements. The crawler is a library: it
 * imports nothing from server/. The website source (server/sources/website/) passes the store's
 * frontier (server/store/crawl.ts), the library version being built and the job's logger.
 */

/** Log lines of a crawl (a pino logger fits). */
export interface CrawlLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** One URL of the durable frontier, as the crawl reads it. */
export interface FrontierEntry {
  id: number;
  urlKey: string;
  url: string;
  depth: number;
}

/** How a page of the frontier ended. */
export type PageOutcome = 'done' | 'unchanged' | 'duplicate' | 'skipped' | 'failed';

/** What the crawler remembers about one page between crawls. */
export interface CrawledPage {
  url: string;
  etag: string | null;
  lastModified: string | null;
  contentHash: string | null;
  render: string;
  title: string;
  links: string[];
  snippetsJson: string;
  fetchedAt: string;
}

/**
 * The durable frontier of a crawl job and the pages of earlier crawls (server/store/crawl.ts).
 * Timestamps are ISO strings passed in by the crawl.
 */
export interface CrawlFrontier {
  /** Queues a URL unless it is known to the job or maxPages are queued already; true when queued. */
  admit(jobId: number, urlKey: string, url: string, depth: number, via: string, maxPages: number, now: string): Promise<boolean>;
  recordSkipped(jobId: number, urlKey: string, url: string, depth: number, reason: string, now: string): Promise<void>;
  has(jobId: number, urlKey: string): Promise<boolean>;
  /** Takes the next queued URL (marks it processing), or null. */
  claim(jobId: number, now: string): Promise<FrontierEntry | null>;
  /** Records a page's content hash; returns the URL that already had it in this job, or null. */
  claimContentHash(entryId: number, jobId: number, hash: string): Promise<string | null>;
  finish(
    entryId: number,
    state: PageOutcome,
    fields: { httpStatus?: number | null; render?: string | null; snippets?: number; error?: string | null },
    now: string,
  ): Promise<void>;
  /** Queues the URLs left processing by a crash again; returns how many. */
  requeueProcessing(jobId: number, now: string): Promise<number>;
  page(libraryId: string, url: string): Promise<CrawledPage | null>;
  savePage(libraryId: string, page: CrawledPage): Promise<void>;
}

/** Where the snippets of the crawled pages go (a library version being built). */
export interface SnippetSink {
  /** Adds snippets; resolves to how many were new (the sink skips what it holds already). */
  add(snippets: SnippetInput[]): Promise<number>;
  readonly snippetCount: number;
}

/** Renders a page in a browser (crawler/browser.ts BrowserRenderer). */
export interface PageRenderer {
  render(url: string, signal?: AbortSignal): Promise<{ status: number; url: string; html: string }>;
}
