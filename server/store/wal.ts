import fs from 'node:fs';
import type { Db } from './db.ts';

/**
 * Keeps the write-ahead log short. While searches keep overlapping read transactions open, the
 * automatic (passive) checkpoints never get to restart the log, so writes during searches (imports,
 * crawls, jobs; the usage counters were the big one until they got their own file, usage.db) grow
 * it without bound; every page read then goes through an ever larger WAL index and searches get
 * several times slower (measured on the 1M benchmark corpus: 3-4 ms BM25 with an empty WAL,
 * 15-20 ms with a 30 MB one).
 */
export class WalKeeper {
  constructor(private readonly db: Db) {}

  /** Bytes in the WAL file (0 for an in-memory database or when there is none). */
  size(): number {
    const file = this.db.name;
    if (!file || file === ':memory:') return 0;
    try {
      return fs.statSync(`${file}-wal`).size;
    } catch {
      return 0;
    }
  }

  /**
   * Checkpoints and truncates the WAL when it is larger than maxBytes. Waits at most waitMs for
   * readers to move on (searches are short); gives up otherwise and tries again next time.
   * Returns true when the log was truncated.
   */
  truncateIfLarger(maxBytes: number, waitMs = 200): boolean {
    if (this.size() <= maxBytes) return false;
    const previous = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma(`busy_timeout = ${waitMs}`);
    try {
      const [r] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return r?.busy === 0;
    } catch {
      return false;
    } finally {
      this.db.pragma(`busy_timeout = ${previous}`);
    }
  }
}
