import fs from 'node:fs';

/** Percentile of an ascending-sorted list (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Memory of a process in MB from /proc: resident, peak resident, file-backed (SQLite mmap) and anonymous (heap). */
export function memoryOf(pid: number): { rss: number; peak: number; file: number; anon: number; shmem: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024, file: kb('RssFile') / 1024, anon: kb('RssAnon') / 1024, shmem: kb('RssShmem') / 1024 };
}

/** Developer questions the load benchmarks cycle through (the same mix for every run). */
export const BENCH_QUESTIONS = [
  'How do I configure the logger with custom options?',
  'register a plugin with options',
  'validate the request body against a schema',
  'handle errors in async route handlers',
  'set up authentication middleware',
  'stream a large response',
  'configure caching and invalidation',
  'write a unit test for a route',
  'parse query string parameters',
  'graceful shutdown and closing connections',
  'environment variables and configuration files',
  'retry failed requests with backoff',
];
