import type { Logger } from '../log.ts';
import type { Db } from '../store/db.ts';
import { WalKeeper } from '../store/wal.ts';

/** Checks the WAL every WAL_CHECK_MS and truncates it above WAL_MAX_BYTES (see server/store/wal.ts for why). */
export const WAL_CHECK_MS = 2000;
export const WAL_MAX_BYTES = 4 * 1024 * 1024;

/** Background task: returns its stop function. */
export function walKeeperTask(db: Db, log: Logger): () => void {
  const keeper = new WalKeeper(db);
  const timer = setInterval(() => {
    try {
      if (keeper.truncateIfLarger(WAL_MAX_BYTES)) log.debug('WAL truncated');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'WAL check failed');
    }
  }, WAL_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
