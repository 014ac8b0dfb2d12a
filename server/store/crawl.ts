import type { Db } from './db.ts';

export type FrontierState = 'queued' | 'processing' | 'done' | 'unchanged' | 'duplicate' | 'skipped' | 'failed';

export interface FrontierEntry {
  id: number;
  jobId: number;
  urlKey: string;
  url: string;
  depth: number;
  via: string;
  state: FrontierState;
  httpStatus: number | null;
  contentHash: string | null;
  render: string | null;
  snippets: number;
  error: string | null;
}

export interface CrawlSite {
  libraryId: string;
  startUrl: string;
  options: Record<string, unknown>;
  schedule: string | null;
  siteTitle: string | null;
  lastJobId: number | null;
  lastCrawledAt: string | null;
}

/** What the crawler remembers about one page between crawls. */
export interface StoredPage {
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

export interface FrontierRow {
  id: number;
  job_id: number;
  url_key: string;
  url: string;
  depth: number;
  via: string;
  state: FrontierState;
  http_status: number | null;
  content_hash: string | null;
  render: string | null;
  snippets: number;
  error: string | null;
}

export interface SiteRow {
  library_id: string;
  start_url: string;
  options_json: string;
  schedule: string | null;
  site_title: string | null;
  last_job_id: number | null;
  last_crawled_at: string | null;
}

export interface PageRow {
  url: string;
  etag: string | null;
  last_modified: string | null;
  content_hash: string | null;
  render: string;
  title: string;
  links_json: string;
  snippets_json: string;
  fetched_at: string;
}

export function toEntry(r: FrontierRow): FrontierEntry {
  return {
    id: r.id,
    jobId: r.job_id,
    urlKey: r.url_key,
    url: r.url,
    depth: r.depth,
    via: r.via,
    state: r.state,
    httpStatus: r.http_status,
    contentHash: r.content_hash,
    render: r.render,
    snippets: r.snippets,
    error: r.error,
  };
}

/** A remembered page row as the crawler reads it (both backends). */
export function toPage(r: PageRow): StoredPage {
  return {
    url: r.url,
    etag: r.etag,
    lastModified: r.last_modified,
    contentHash: r.content_hash,
    render: r.render,
    title: r.title,
    links: JSON.parse(r.links_json) as string[],
    snippetsJson: r.snippets_json,
    fetchedAt: r.fetched_at,
  };
}

/** A crawl site as saved (saveSite): a schedule of undefined keeps the stored one. */
export interface SiteInput {
  libraryId: string;
  startUrl: string;
  options: Record<string, unknown>;
  schedule?: string | null;
  siteTitle?: string | null;
  lastJobId?: number | null;
  lastCrawledAt?: string | null;
}

/** What a frontier entry's end records beside its state (finish). */
export interface FrontierFinish {
  httpStatus?: number | null;
  render?: string | null;
  snippets?: number;
  error?: string | null;
}

/** Crawl frontier (per job), remembered pages and site settings (per library). */
export class CrawlStore {
  constructor(private readonly db: Db) {}

  // ---- frontier ----------------------------------------------------------------------------

  /**
   * Adds a URL unless the job already has it or has reached maxPages (skipped entries do not count).
   * Returns true when the URL was added. Synchronous, so the check and the insert are one step.
   */
  async admit(jobId: number, urlKey: string, url: string, depth: number, via: string, maxPages: number, now: string): Promise<boolean> {
    return this.db.transaction(() => {
      const exists = this.db.prepare('SELECT 1 FROM crawl_frontier WHERE job_id = ? AND url_key = ?').get(jobId, urlKey);
      if (exists) return false;
      const n = (this.db.prepare("SELECT count(*) AS n FROM crawl_frontier WHERE job_id = ? AND state != 'skipped'").get(jobId) as { n: number }).n;
      if (n >= maxPages) return false;
      this.db
        .prepare("INSERT INTO crawl_frontier (job_id, url_key, url, depth, via, state, updated_at) VALUES (?, ?, ?, ?, ?, 'queued', ?)")
        .run(jobId, urlKey, url, depth, via, now);
      return true;
    })();
  }

  /** Records a URL that was looked at and deliberately not crawled (robots.txt, noindex, out of scope after a redirect). */
  async recordSkipped(jobId: number, urlKey: string, url: string, depth: number, reason: string, now: string): Promise<void> {
    this.db
      .prepare("INSERT OR IGNORE INTO crawl_frontier (job_id, url_key, url, depth, via, state, error, updated_at) VALUES (?, ?, ?, ?, 'link', 'skipped', ?, ?)")
      .run(jobId, urlKey, url, depth, reason, now);
  }

  async has(jobId: number, urlKey: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM crawl_frontier WHERE job_id = ? AND url_key = ?').get(jobId, urlKey) !== undefined;
  }

  /** Takes the next queued URL (shallowest first) and marks it processing. */
  async claim(jobId: number, now: string): Promise<FrontierEntry | null> {
    return this.db.transaction(() => {
      const r = this.db.prepare("SELECT * FROM crawl_frontier WHERE job_id = ? AND state = 'queued' ORDER BY depth, id LIMIT 1").get(jobId) as
        | FrontierRow
        | undefined;
      if (!r) return null;
      this.db.prepare("UPDATE crawl_frontier SET state = 'processing', updated_at = ? WHERE id = ?").run(now, r.id);
      return toEntry({ ...r, state: 'processing' });
    })();
  }

  /**
   * Claims a content hash for a page: returns the URL of an earlier page of the same job with the
   * same main content (the page is then a duplicate), or null after recording the hash on this page.
   */
  async claimContentHash(entryId: number, jobId: number, hash: string): Promise<string | null> {
    return this.db.transaction(() => {
      const other = this.db
        .prepare("SELECT url FROM crawl_frontier WHERE job_id = ? AND content_hash = ? AND id != ? AND state IN ('processing','done','unchanged') LIMIT 1")
        .get(jobId, hash, entryId) as { url: string } | undefined;
      if (other) return other.url;
      this.db.prepare('UPDATE crawl_frontier SET content_hash = ? WHERE id = ?').run(hash, entryId);
      return null;
    })();
  }

  async finish(entryId: number, state: FrontierState, fields: FrontierFinish, now: string): Promise<void> {
    this.db
      .prepare(
        'UPDATE crawl_frontier SET state = ?, http_status = coalesce(?, http_status), render = coalesce(?, render), snippets = ?, error = ?, updated_at = ? WHERE id = ?',
      )
      .run(state, fields.httpStatus ?? null, fields.render ?? null, fields.snippets ?? 0, fields.error ?? null, now, entryId);
  }

  /** After a restart: pages that were in flight are queued again (their snippets, if stored, are deduplicated by the build). */
  async requeueProcessing(jobId: number, now: string): Promise<number> {
    return this.db
      .prepare("UPDATE crawl_frontier SET state = 'queued', content_hash = NULL, updated_at = ? WHERE job_id = ? AND state = 'processing'")
      .run(now, jobId).changes;
  }

  async counts(jobId: number): Promise<Record<FrontierState, number>> {
    const out: Record<FrontierState, number> = { queued: 0, processing: 0, done: 0, unchanged: 0, duplicate: 0, skipped: 0, failed: 0 };
    for (const r of this.db.prepare('SELECT state, count(*) AS n FROM crawl_frontier WHERE job_id = ? GROUP BY state').all(jobId) as {
      state: FrontierState;
      n: number;
    }[]) {
      out[r.state] = r.n;
    }
    return out;
  }

  async entries(jobId: number, state?: FrontierState): Promise<FrontierEntry[]> {
    const rows = state
      ? this.db.prepare('SELECT * FROM crawl_frontier WHERE job_id = ? AND state = ? ORDER BY id').all(jobId, state)
      : this.db.prepare('SELECT * FROM crawl_frontier WHERE job_id = ? ORDER BY id').all(jobId);
    return (rows as FrontierRow[]).map(toEntry);
  }

  /** Latest errors of a job, newest first. */
  async errors(jobId: number, limit: number): Promise<{ url: string; error: string }[]> {
    return this.db
      .prepare("SELECT url, error FROM crawl_frontier WHERE job_id = ? AND state = 'failed' AND error IS NOT NULL ORDER BY updated_at DESC, id DESC LIMIT ?")
      .all(jobId, limit) as { url: string; error: string }[];
  }

  /** Drops the frontiers of a library's earlier, finished crawl jobs (the latest stays for inspection). */
  async purgeFinishedFrontiers(libraryId: string, keepJobId: number): Promise<void> {
    this.db
      .prepare(
        `DELETE FROM crawl_frontier WHERE job_id != ? AND job_id IN (
           SELECT id FROM jobs WHERE library_id = ? AND kind = 'crawl' AND state IN ('succeeded','failed','cancelled'))`,
      )
      .run(keepJobId, libraryId);
  }

  // ---- remembered pages --------------------------------------------------------------------

  async page(libraryId: string, url: string): Promise<StoredPage | null> {
    const r = this.db.prepare('SELECT * FROM crawl_pages WHERE library_id = ? AND url = ?').get(libraryId, url) as PageRow | undefined;
    return r ? toPage(r) : null;
  }

  async savePage(libraryId: string, p: StoredPage): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO crawl_pages (library_id, url, etag, last_modified, content_hash, render, title, links_json, snippets_json, fetched_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (library_id, url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, content_hash = excluded.content_hash,
           render = excluded.render, title = excluded.title, links_json = excluded.links_json, snippets_json = excluded.snippets_json, fetched_at = excluded.fetched_at`,
      )
      .run(libraryId, p.url, p.etag, p.lastModified, p.contentHash, p.render, p.title, JSON.stringify(p.links), p.snippetsJson, p.fetchedAt);
  }

  /** Forgets pages a finished crawl no longer reached (removed from the site or now out of scope). */
  async prunePages(libraryId: string, jobId: number): Promise<number> {
    return this.db
      .prepare(
        `DELETE FROM crawl_pages WHERE library_id = ? AND url NOT IN (
           SELECT url_key FROM crawl_frontier WHERE job_id = ? AND state IN ('done','unchanged'))`,
      )
      .run(libraryId, jobId).changes;
  }

  async pageCount(libraryId: string): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM crawl_pages WHERE library_id = ?').get(libraryId) as { n: number }).n;
  }

  // ---- sites -------------------------------------------------------------------------------

  async site(libraryId: string): Promise<CrawlSite | null> {
    const r = this.db.prepare('SELECT * FROM crawl_sites WHERE library_id = ?').get(libraryId) as SiteRow | undefined;
    return r ? toSite(r) : null;
  }

  async sites(): Promise<CrawlSite[]> {
    return (this.db.prepare('SELECT * FROM crawl_sites ORDER BY library_id').all() as SiteRow[]).map(toSite);
  }

  /** Creates or updates a site; a schedule of undefined keeps the stored one. */
  async saveSite(s: SiteInput, now: string): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO crawl_sites (library_id, start_url, options_json, schedule, site_title, last_job_id, last_crawled_at, created_at, updated_at)
         VALUES (@libraryId, @startUrl, @options, @schedule, @siteTitle, @lastJobId, @lastCrawledAt, @now, @now)
         ON CONFLICT (library_id) DO UPDATE SET start_url = excluded.start_url, options_json = excluded.options_json,
           schedule = CASE WHEN @keepSchedule = 1 THEN schedule ELSE excluded.schedule END,
           site_title = coalesce(excluded.site_title, site_title), last_job_id = coalesce(excluded.last_job_id, last_job_id),
           last_crawled_at = coalesce(excluded.last_crawled_at, last_crawled_at), updated_at = excluded.updated_at`,
      )
      .run({
        libraryId: s.libraryId,
        startUrl: s.startUrl,
        options: JSON.stringify(s.options),
        schedule: s.schedule ?? null,
        keepSchedule: s.schedule === undefined ? 1 : 0,
        siteTitle: s.siteTitle ?? null,
        lastJobId: s.lastJobId ?? null,
        lastCrawledAt: s.lastCrawledAt ?? null,
        now,
      });
  }

  async setSchedule(libraryId: string, schedule: string | null, now: string): Promise<boolean> {
    return this.db.prepare('UPDATE crawl_sites SET schedule = ?, updated_at = ? WHERE library_id = ?').run(schedule, now, libraryId).changes > 0;
  }
}

export function toSite(r: SiteRow): CrawlSite {
  return {
    libraryId: r.library_id,
    startUrl: r.start_url,
    options: JSON.parse(r.options_json) as Record<string, unknown>,
    schedule: r.schedule,
    siteTitle: r.site_title,
    lastJobId: r.last_job_id,
    lastCrawledAt: r.last_crawled_at,
  };
}
