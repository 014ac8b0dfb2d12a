import type { Store } from '../store/index.ts';
import type { Job } from '../model.ts';
import type { Logger } from '../log.ts';
import { ApiError } from '../errors.ts';

export interface JobContext<P> {
  job: Job<P>;
  /** Aborted when the job is cancelled or the server shuts down. */
  signal: AbortSignal;
  /** Records progress on the job row (shown by GET /api/jobs/:id and `stacks jobs show`). */
  progress(progress: Record<string, unknown>): void;
  log: Logger;
}

export type JobHandler<P> = (ctx: JobContext<P>) => Promise<void>;

/** Thrown by a handler (or raised by the signal) when a job was cancelled. */
export class JobCancelled extends Error {
  override name = 'JobCancelled';
}

/**
 * The durable job queue: rows in SQLite, a small worker loop in this process. Jobs left
 * 'running' by a crash are queued again at start; handlers resume (crawls) or rerun (imports)
 * idempotently.
 */
export class JobQueue {
  private handlers = new Map<string, JobHandler<never>>();
  private running = new Map<number, { controller: AbortController; promise: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly concurrency: number,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  register<P>(kind: string, handler: JobHandler<P>): void {
    this.handlers.set(kind, handler as JobHandler<never>);
  }

  enqueue<P>(kind: string, payload: P, options: { libraryId?: string | null; memberId?: number | null } = {}): { id: number; position: number | null } {
    const id = this.store.jobs.insert(kind, payload, options.libraryId ?? null, options.memberId ?? null, this.now());
    const startsNow = !this.stopped && this.running.size < this.concurrency && this.handlers.has(kind) && this.store.jobs.counts().queued === 1;
    const position = startsNow ? null : this.store.jobs.position(id);
    this.kick();
    return { id, position };
  }

  get(id: number): Job {
    const job = this.store.jobs.get(id);
    if (!job) throw new ApiError('job_not_found', `No job with id ${id}.`);
    return job;
  }

  list(filter: Parameters<Store['jobs']['list']>[0] = {}): Job[] {
    return this.store.jobs.list(filter);
  }

  cancel(id: number): Job {
    const job = this.get(id);
    if (job.state === 'queued' || job.state === 'running') {
      this.store.jobs.requestCancel(id, this.now());
      this.running.get(id)?.controller.abort(new JobCancelled('cancelled'));
    }
    return this.get(id);
  }

  /** Starts the worker loop; call after every handler is registered. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const requeued = this.store.jobs.requeueRunning(this.now());
    if (requeued > 0) this.log.info({ requeued }, 'jobs interrupted by a restart were queued again');
    this.timer = setInterval(() => this.kick(), 500);
    this.timer.unref();
    this.kick();
  }

  /** Stops taking jobs and aborts running ones; they stay 'running' in the store and are requeued on the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const r of this.running.values()) r.controller.abort(new Error('shutdown'));
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
  }

  /** Resolves when nothing is queued or running (for tests and the CLI). */
  async idle(): Promise<void> {
    for (;;) {
      const c = this.store.jobs.counts();
      if (c.queued === 0 && c.running === 0 && this.running.size === 0) return;
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  }

  private kick(): void {
    if (this.stopped) return;
    while (this.running.size < this.concurrency) {
      const job = this.store.jobs.claim([...this.handlers.keys()], this.now());
      if (!job) break;
      this.run(job);
    }
  }

  private run(job: Job): void {
    const handler = this.handlers.get(job.kind) as JobHandler<unknown>;
    const controller = new AbortController();
    const log = this.log.child({ jobId: job.id, kind: job.kind });
    const promise = (async () => {
      log.info({ attempt: job.attempts }, 'job started');
      try {
        if (job.cancelRequested) throw new JobCancelled('cancelled');
        await handler({
          job,
          signal: controller.signal,
          progress: (p) => this.store.jobs.setProgress(job.id, p, this.now()),
          log,
        });
        this.store.jobs.finish(job.id, 'succeeded', null, this.now());
        log.info('job succeeded');
      } catch (err) {
        if (this.stopped && !(err instanceof JobCancelled)) {
          log.warn('job interrupted by shutdown; it resumes on next start');
          return;
        }
        const cancelled = err instanceof JobCancelled || this.store.jobs.isCancelRequested(job.id);
        const message = err instanceof Error ? err.message : String(err);
        this.store.jobs.finish(job.id, cancelled ? 'cancelled' : 'failed', cancelled ? 'cancelled' : message, this.now());
        if (cancelled) log.info('job cancelled');
        else log.error({ err: message }, 'job failed');
      } finally {
        this.running.delete(job.id);
        for (const w of this.idleWaiters.splice(0)) w();
        setImmediate(() => this.kick());
      }
    })();
    this.running.set(job.id, { controller, promise });
  }
}

/** Throws JobCancelled when the signal was aborted; handlers call it between units of work. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new JobCancelled('cancelled');
}
