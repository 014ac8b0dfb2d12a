import cliProgress from 'cli-progress';
import { jobFinished } from '../lib/model.ts';
import type { JobView } from './context.ts';

/** Where a followed job is read from: the local data dir's job table, or a remote instance's GET /api/jobs/:id. */
export type JobReader = () => Promise<JobView> | JobView;

/** How far a job is, from the progress fields its kind records (null: its kind records no counts). */
export function jobMeter(progress: Record<string, unknown>): { value: number; total: number; unit: string } | null {
  const n = (k: string) => (typeof progress[k] === 'number' ? (progress[k] as number) : undefined);
  const pagesDone = n('pagesDone');
  if (pagesDone !== undefined) {
    // crawl: pages done or failed, of those plus the ones still queued
    const value = pagesDone + (n('pagesFailed') ?? 0);
    return { value, total: value + (n('pagesQueued') ?? 0), unit: 'pages' };
  }
  const links = n('links');
  if (links) return { value: n('linksDone') ?? 0, total: links, unit: 'links' };
  if (Array.isArray(progress.files)) {
    const files = progress.files as { state?: string }[];
    return { value: files.filter((f) => f.state !== 'pending').length, total: files.length, unit: 'files' };
  }
  const total = n('total');
  // import (snippets read of total), OpenAPI and re-embed (done of total)
  if (total !== undefined) return { value: Math.min(total, n('done') ?? n('snippets') ?? 0), total, unit: 'snippets' };
  return null;
}

/** The state part of a progress line: "queued (position 2)", "running: indexing", "failed: reason". */
function stateText(job: JobView): string {
  if (job.state === 'queued') return job.position ? `queued (position ${job.position})` : 'queued';
  if (job.state === 'failed' || job.state === 'cancelled') return job.error ? `${job.state}: ${job.error}` : job.state;
  const phase = job.state === 'running' && typeof job.progress.phase === 'string' ? job.progress.phase : '';
  return phase ? `${job.state}: ${phase}` : job.state;
}

/** "120/400 snippets", or '' when the job's kind records no counts. */
export function countsText(job: JobView): string {
  const m = jobMeter(job.progress);
  return m ? `${m.value}/${m.total} ${m.unit}` : '';
}

/** One progress line for a log (no terminal): "job 7 import /acme/x: running 120/400 snippets". */
export function progressLine(job: JobView): string {
  const counts = countsText(job);
  return `job ${job.id} ${job.kind}${job.libraryId ? ` ${job.libraryId}` : ''}: ${stateText(job)}${counts ? ` ${counts}` : ''}`;
}

export interface FollowOptions {
  /** Show progress on stderr (a bar on a terminal, else a line when it changes, at most every `lineEveryMs`). */
  progress: boolean;
  pollMs: number;
  lineEveryMs?: number;
  /** Called when reading the job failed; return true to keep following (a remote instance briefly away). */
  onReadError?: (err: unknown) => boolean;
}

/**
 * Follows a job until it ends, showing its progress on stderr, and returns its final view. The
 * job runs wherever it was started (a server, another CLI); following never changes it.
 */
export async function followJob(read: JobReader, options: FollowOptions): Promise<JobView> {
  const tty = options.progress && process.stderr.isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar(
        { format: 'job {id} {kind} [{bar}] {value}/{total} {unit} | {status}', stream: process.stderr, hideCursor: true, clearOnComplete: false },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let started = false;
  let lastLine = '';
  let lastLineAt = 0;
  const show = (job: JobView, final: boolean) => {
    const m = jobMeter(job.progress);
    if (bar) {
      const total = Math.max(1, m?.total ?? 1);
      const value = m ? m.value : job.state === 'succeeded' ? 1 : 0;
      const payload = { id: job.id, kind: job.kind, unit: m?.unit ?? '', status: stateText(job) };
      if (!started) bar.start(total, value, payload);
      else {
        bar.setTotal(total);
        bar.update(value, payload);
      }
      started = true;
    } else if (options.progress) {
      const line = progressLine(job);
      const due = Date.now() - lastLineAt >= (options.lineEveryMs ?? 1000);
      if (line !== lastLine && (due || final)) {
        process.stderr.write(`${line}\n`);
        lastLine = line;
        lastLineAt = Date.now();
      }
    }
  };
  const stopBar = () => {
    if (started) bar?.stop();
  };
  // Ctrl-C stops following (the job goes on) and gives the terminal its cursor back.
  const onSigint = () => {
    stopBar();
    process.stderr.write('\nStopped following; the job goes on.\n');
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  try {
    for (;;) {
      let job: JobView | null = null;
      try {
        job = await read();
      } catch (err) {
        if (!options.onReadError?.(err)) throw err;
      }
      if (job && jobFinished(job.state)) {
        show(job, true);
        return job;
      }
      if (job) show(job, false);
      await new Promise((r) => setTimeout(r, options.pollMs));
    }
  } finally {
    process.removeListener('SIGINT', onSigint);
    stopBar();
  }
}
