import type { Migration } from './migration.ts';

/**
 * A failed job keeps the code of its error (an ApiError's `error`, null for any other failure), so
 * the job list can tell a failure a retry may cure (a network error, a timeout) from one it cannot
 * (bad input, a missing tag, a source that cannot be indexed by version), and offer Retry only for
 * the first.
 *
 * The version-fetch jobs that failed before because the library was not from Git, or the tag did
 * not exist, are marked as such (those messages are the fetcher's own); other old failures stay
 * unknown and count as retryable, as they did.
 */
export const m022: Migration = {
  version: 22,
  name: 'job-error-code',
  up(db) {
    db.exec(`
      ALTER TABLE jobs ADD COLUMN error_code TEXT;
      UPDATE jobs SET error_code = 'validation_error'
        WHERE kind = 'version-fetch' AND state = 'failed' AND (error LIKE '%(there is no git source for it)%' OR error LIKE '% has no tag for version %');
    `);
  },
};
