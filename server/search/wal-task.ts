import type { BackgroundTask } from '../background.ts';
import { WalKeeper } from '../store/wal.ts';

/** Checks the WAL every WAL_CHECK_MS and truncates it above WAL_MAX_BYTES (see server/store/wal.ts for why). */
export const WAL_CHECK_MS = 2000;
export const WAL_MAX_BYTES = 4 * 1024 * 1024;

export const walKeeperTask: BackgroundTask = (services) => {
  const keeper = new WalKeeper(services.store.db);
  const timer = setInterval(() => {
    try {
      if (keeper.truncateIfLarger(WAL_MAX_BYTES)) services.log.debug('WAL truncated');
    } catch (err) {
      services.log.warn({ err: (err as Error).message }, 'WAL check failed');
    }
  }, WAL_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
};
