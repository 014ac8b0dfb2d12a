import {
  toEntry,
  toPage,
  toSite,
  type CrawlSite,
  type CrawlStore,
  type FrontierEntry,
  type FrontierFinish,
  type FrontierRow,
  type FrontierState,
  type PageRow,
  type SiteInput,
  type SiteRow,
  type StoredPage,
} from '../crawl.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { noNul } from './text.ts';
import { pgQuery, withTransaction } from './transaction.ts';

/** The first key of the per-job transaction lock on a crawl frontier ("Cr"); the second is the job id. */
const FRONTIER_LOCK = 0x4372;

/**
 * Serializes, per crawl job, the frontier steps that read and then write (admit, claimContentHash):
 * on SQLite one writer does that; here the workers of several nodes may call them at once. A
 * transaction-scoped advisory lock, released at COMMIT or ROLLBACK; job ids past 2^31 share keys with
 * smaller ones, which only makes two jobs wait for each other. The statements after it see what the
 * previous holder committed (READ COMMITTED takes a new snapshot per statement).
 */
async function lockFrontier(pool: PgPool, jobId: number): Promise<void> {
  await pgQuery(pool, 'SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483647)::int)', [FRONTIER_LOCK, jobId]);
}

/**
 * Crawl frontier (per job), remembered pages and site settings (per library) on PostgreSQL, method for
 * method SQLite's CrawlStore (server/store/crawl.ts). Several workers, on several nodes, may crawl one
 * job: a URL is claimed with FOR UPDATE SKIP LOCKED (each queued URL goes to one worker), and the
 * steps that check then write hold the job's frontier lock (lockFrontier).
 */
export class PgCrawlStore implements SameShape<CrawlStore> {
  constructor(private readonly pool: PgPool) {}

  // ---- frontier ----------------------------------------------------------------------------

  /**
   * Adds a URL unless the job already has it or has reached maxPages (skipped entries do not count);
   * true when added. Under the job's lock, so two workers admitting at once cannot pass maxPages.
   */
  async admit(jobId: number, urlKey: string, url: string, depth: number, via: string, maxPages: number, now: string): Promise<boolean> {
    return withTransaction(this.pool, async () => {
      await lockFrontier(this.pool, jobId);
      // SQLite checks "already there" then "full"; both answer false, so one statement does both.
      // NOT EXISTS before ON CONFLICT: a row that conflicts has already drawn an id, and ids stay dense as SQLite's.
      const r = await pgQuery(
        this.pool,
        `INSERT INTO crawl_frontier (job_id, url_key, url, depth, via, state, updated_at)
         SELECT $1, $2, $3, $4, $5, 'queued', $6
         WHERE NOT EXISTS (SELECT 1 FROM crawl_frontier WHERE job_id = $1 AND url_key = $2)
           AND (SELECT count(*) FROM crawl_frontier WHERE job_id = $1 AND state <> 'skipped') < $7
         ON CONFLICT (job_id, url_key) DO NOTHING`,
        [jobId, urlKey, url, depth, via, now, maxPages],
      );
      return (r.rowCount ?? 0) > 0;
    });
  }

  /** SQLite's INSERT OR IGNORE: a URL the job already has stays as it is (NOT EXISTS first, as in admit, so no id is drawn for it). */
  async recordSkipped(jobId: number, urlKey: string, url: string, depth: number, reason: string, now: string): Promise<void> {
    await pgQuery(
      this.pool,
      `INSERT INTO crawl_frontier (job_id, url_key, url, depth, via, state, error, updated_at)
       SELECT $1, $2, $3, $4, 'link', 'skipped', $5, $6 WHERE NOT EXISTS (SELECT 1 FROM crawl_frontier WHERE job_id = $1 AND url_key = $2)
       ON CONFLICT (job_id, url_key) DO NOTHING`,
      [jobId, urlKey, url, depth, reason, now],
    );
  }

  async has(jobId: number, urlKey: string): Promise<boolean> {
    return (await pgQuery(this.pool, 'SELECT 1 FROM crawl_frontier WHERE job_id = $1 AND url_key = $2', [jobId, urlKey])).rows.length > 0;
  }

  /** Takes the next queued URL (shallowest first) and marks it processing; workers claiming at once skip each other's row. */
  async claim(jobId: number, now: string): Promise<FrontierEntry | null> {
    const { rows } = await pgQuery<FrontierRow>(
      this.pool,
      `UPDATE crawl_frontier SET state = 'processing', updated_at = $2
       WHERE id = (SELECT id FROM crawl_frontier WHERE job_id = $1 AND state = 'queued' ORDER BY depth, id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [jobId, now],
    );
    return rows[0] ? toEntry(rows[0]) : null;
  }

  /**
   * The URL of an earlier page of the job with the same main content, or null after recording the
   * hash on this page. Under the job's lock: two workers with the same content at once find one
   * original and one duplicate, as on SQLite, not two originals.
   */
  async claimContentHash(entryId: number, jobId: number, hash: string): Promise<string | null> {
    return withTransaction(this.pool, async () => {
      await lockFrontier(this.pool, jobId);
      const { rows } = await pgQuery<{ url: string }>(
        this.pool,
        "SELECT url FROM crawl_frontier WHERE job_id = $1 AND content_hash = $2 AND id <> $3 AND state IN ('processing','done','unchanged') LIMIT 1",
        [jobId, hash, entryId],
      );
      if (rows[0]) return rows[0].url;
      await pgQuery(this.pool, 'UPDATE crawl_frontier SET content_hash = $1 WHERE id = $2', [hash, entryId]);
      return null;
    });
  }

  async finish(entryId: number, state: FrontierState, fields: FrontierFinish, now: string): Promise<void> {
    await pgQuery(
      this.pool,
      'UPDATE crawl_frontier SET state = $1, http_status = coalesce($2, http_status), render = coalesce($3, render), snippets = $4, error = $5, updated_at = $6 WHERE id = $7',
      [state, fields.httpStatus ?? null, fields.render ?? null, fields.snippets ?? 0, fields.error ?? null, now, entryId],
    );
  }

  async requeueProcessing(jobId: number, now: string): Promise<number> {
    const r = await pgQuery(
      this.pool,
      "UPDATE crawl_frontier SET state = 'queued', content_hash = NULL, updated_at = $1 WHERE job_id = $2 AND state = 'processing'",
      [now, jobId],
    );
    return r.rowCount ?? 0;
  }

  async counts(jobId: number): Promise<Record<FrontierState, number>> {
    const out: Record<FrontierState, number> = { queued: 0, processing: 0, done: 0, unchanged: 0, duplicate: 0, skipped: 0, failed: 0 };
    const { rows } = await pgQuery<{ state: FrontierState; n: number }>(
      this.pool,
      'SELECT state, count(*) AS n FROM crawl_frontier WHERE job_id = $1 GROUP BY state',
      [jobId],
    );
    for (const r of rows) out[r.state] = r.n;
    return out;
  }

  async entries(jobId: number, state?: FrontierState): Promise<FrontierEntry[]> {
    const { rows } = state
      ? await pgQuery<FrontierRow>(this.pool, 'SELECT * FROM crawl_frontier WHERE job_id = $1 AND state = $2 ORDER BY id', [jobId, state])
      : await pgQuery<FrontierRow>(this.pool, 'SELECT * FROM crawl_frontier WHERE job_id = $1 ORDER BY id', [jobId]);
    return rows.map(toEntry);
  }

  async errors(jobId: number, limit: number): Promise<{ url: string; error: string }[]> {
    const { rows } = await pgQuery<{ url: string; error: string }>(
      this.pool,
      `SELECT url, error FROM crawl_frontier WHERE job_id = $1 AND state = 'failed' AND error IS NOT NULL
       ORDER BY updated_at COLLATE "C" DESC, id DESC LIMIT $2`,
      [jobId, limit],
    );
    return rows;
  }

  async purgeFinishedFrontiers(libraryId: string, keepJobId: number): Promise<void> {
    await pgQuery(
      this.pool,
      `DELETE FROM crawl_frontier WHERE job_id <> $1 AND job_id IN (
         SELECT id FROM jobs WHERE library_id = $2 AND kind = 'crawl' AND state IN ('succeeded','failed','cancelled'))`,
      [keepJobId, libraryId],
    );
  }

  // ---- remembered pages --------------------------------------------------------------------

  async page(libraryId: string, url: string): Promise<StoredPage | null> {
    const { rows } = await pgQuery<PageRow>(this.pool, 'SELECT * FROM crawl_pages WHERE library_id = $1 AND url = $2', [libraryId, url]);
    return rows[0] ? toPage(rows[0]) : null;
  }

  async savePage(libraryId: string, p: StoredPage): Promise<void> {
    await pgQuery(
      this.pool,
      `INSERT INTO crawl_pages (library_id, url, etag, last_modified, content_hash, render, title, links_json, snippets_json, fetched_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (library_id, url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, content_hash = excluded.content_hash,
         render = excluded.render, title = excluded.title, links_json = excluded.links_json, snippets_json = excluded.snippets_json, fetched_at = excluded.fetched_at`,
      [libraryId, p.url, p.etag, p.lastModified, p.contentHash, p.render, noNul(p.title), JSON.stringify(p.links), p.snippetsJson, p.fetchedAt],
    );
  }

  async prunePages(libraryId: string, jobId: number): Promise<number> {
    const r = await pgQuery(
      this.pool,
      `DELETE FROM crawl_pages WHERE library_id = $1 AND url NOT IN (
         SELECT url_key FROM crawl_frontier WHERE job_id = $2 AND state IN ('done','unchanged'))`,
      [libraryId, jobId],
    );
    return r.rowCount ?? 0;
  }

  async pageCount(libraryId: string): Promise<number> {
    return (await pgQuery<{ n: number }>(this.pool, 'SELECT count(*) AS n FROM crawl_pages WHERE library_id = $1', [libraryId])).rows[0].n;
  }

  // ---- sites -------------------------------------------------------------------------------

  async site(libraryId: string): Promise<CrawlSite | null> {
    const { rows } = await pgQuery<SiteRow>(this.pool, 'SELECT * FROM crawl_sites WHERE library_id = $1', [libraryId]);
    return rows[0] ? toSite(rows[0]) : null;
  }

  async sites(): Promise<CrawlSite[]> {
    return (await pgQuery<SiteRow>(this.pool, 'SELECT * FROM crawl_sites ORDER BY library_id COLLATE "C"')).rows.map(toSite);
  }

  /** Creates or updates a site; a schedule of undefined keeps the stored one. */
  async saveSite(s: SiteInput, now: string): Promise<void> {
    await pgQuery(
      this.pool,
      `INSERT INTO crawl_sites AS s (library_id, start_url, options_json, schedule, site_title, last_job_id, last_crawled_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
       ON CONFLICT (library_id) DO UPDATE SET start_url = excluded.start_url, options_json = excluded.options_json,
         schedule = CASE WHEN $9 THEN s.schedule ELSE excluded.schedule END,
         site_title = coalesce(excluded.site_title, s.site_title), last_job_id = coalesce(excluded.last_job_id, s.last_job_id),
         last_crawled_at = coalesce(excluded.last_crawled_at, s.last_crawled_at), updated_at = excluded.updated_at`,
      [
        s.libraryId,
        s.startUrl,
        JSON.stringify(s.options),
        s.schedule ?? null,
        s.siteTitle ?? null,
        s.lastJobId ?? null,
        s.lastCrawledAt ?? null,
        now,
        s.schedule === undefined,
      ],
    );
  }

  async setSchedule(libraryId: string, schedule: string | null, now: string): Promise<boolean> {
    const r = await pgQuery(this.pool, 'UPDATE crawl_sites SET schedule = $1, updated_at = $2 WHERE library_id = $3', [schedule, now, libraryId]);
    return (r.rowCount ?? 0) > 0;
  }
}
