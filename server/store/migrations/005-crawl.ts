import type { Migration } from './migration.ts';

/**
 * Website crawler state.
 * - crawl_sites: one row per crawled library: start URL, crawl options, optional cron schedule.
 * - crawl_pages: the last known state of every page of a site across crawls (validators for
 *   conditional requests, content hash, extracted snippets and outgoing links), so a re-crawl can
 *   skip unchanged pages and still follow their links.
 * - crawl_frontier: the URL queue of one crawl job; it survives a crash, so a restarted job
 *   continues where it stopped.
 */
export const m005: Migration = {
  version: 5,
  name: 'crawl',
  up(db) {
    db.exec(`
      CREATE TABLE crawl_sites (
        library_id TEXT PRIMARY KEY REFERENCES libraries(id) ON DELETE CASCADE,
        start_url TEXT NOT NULL,
        options_json TEXT NOT NULL DEFAULT '{}',
        schedule TEXT,
        site_title TEXT,
        last_job_id INTEGER,
        last_crawled_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      CREATE TABLE crawl_pages (
        library_id TEXT NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        etag TEXT,
        last_modified TEXT,
        content_hash TEXT,
        render TEXT NOT NULL DEFAULT 'http',
        title TEXT NOT NULL DEFAULT '',
        links_json TEXT NOT NULL DEFAULT '[]',
        snippets_json TEXT NOT NULL DEFAULT '[]',
        fetched_at TEXT NOT NULL,
        PRIMARY KEY (library_id, url)
      );

      CREATE TABLE crawl_frontier (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        url_key TEXT NOT NULL,
        url TEXT NOT NULL,
        depth INTEGER NOT NULL,
        via TEXT NOT NULL DEFAULT 'link',
        state TEXT NOT NULL CHECK (state IN ('queued','processing','done','unchanged','duplicate','skipped','failed')),
        http_status INTEGER,
        content_hash TEXT,
        render TEXT,
        snippets INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        updated_at TEXT NOT NULL,
        UNIQUE (job_id, url_key)
      );
      CREATE INDEX crawl_frontier_next ON crawl_frontier (job_id, state, depth, id);
      CREATE INDEX crawl_frontier_hash ON crawl_frontier (job_id, content_hash);
    `);
  },
};
