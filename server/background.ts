import type { Services } from './services.ts';
import { importSweepTask } from './ingest/import-job.ts';
import { walKeeperTask } from './search/wal-task.ts';
import { startCrawlSchedules } from '../crawler/schedule.ts';

/** Periodic work that runs beside the HTTP server (schedules, purges). Returns a stop function. */
export type BackgroundTask = (services: Services) => () => void;

/** Feature modules add their background tasks here (e.g. the crawler's re-crawl schedule). */
export const backgroundTasks: BackgroundTask[] = [startCrawlSchedules, importSweepTask, walKeeperTask];

export function startBackground(services: Services): () => void {
  const stops = backgroundTasks.map((task) => task(services));
  return () => stops.forEach((stop) => stop());
}
