import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/index.ts';
import type { Job } from '../../lib/model.ts';
import type { Logger } from '../log.ts';
import { ApiError } from '../../lib/errors.ts';

export interface JobContext<P> {
  job: Job<P>;
  /** Aborted when the job is cancelled or the server shuts down. */
  signal: AbortSignal;
  /** Records progress on the job row (shown by GET /api/jobs/:id and `stacks jobs show`). */
  progress(progress: Record<string, unknown>): void;
  /** Throws JobCancelled when the job was cancelled, here or from another process (the CLI on the same data dir), or the server is stopping. */
  checkCancelled(): void;
  /** True when a job somebody waits for (not of a background kind) is queued: a long background job stops at a safe point and queues itself again. */
  othersWaiting(): boolean;
  log: Logger;
}

export type JobHandler<P> = (ctx: JobContext<P>) => Promise<void>;

/** Hears every job run that ended here: its kind, how it ended, and how long the handler ran (seconds). */
export type JobListener = (kind: string, outcome: 'succeeded' | 'failed' | 'cancelled' | 'interrupted', seconds: number) => void;

/** Thrown by a handler (or raised by the signal) when a job was cancelled. */
export class JobCancelled extends Error {
  override name = 'JobCancelled';
}

/** Queues alive in this process, so that a restarted in-process queue can tell its predecessor is gone. */
const liveInstances = new Set<string>();
const HEARTBEAT_MS = 5_000;
/** A job whose owner has not beaten for this long is taken as orphaned (its process hung or died elsewhere). */
const STALE_MS = 60_000;

/** Whether the process that owns a running job is gone. Owners are `host:pid:instance`. */
function ownerIsGone(owner: string | null, heartbeatAt: string | null, nowMs: number): boolean {
  const m = owner ? /^(.*):(\d+):([\w-]+)$/.exec(owner) : null;
  if (!m) return true;
  const [, host, pidText, instance] = m;
  if (host === os.hostname()) {
    const pid = Number(pidText);
    if (pid === process.pid) return !liveInstances.has(instance!);
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
    }
  }
  return heartbeatAt === null || Date.parse(heartbeatAt) < nowMs - STALE_MS;
}

/**
 * The durable job queue: rows in SQLite, a small worker loop in this process. Jobs left
 * 'running' by a crashed process are queued again; handlers resume (crawls) or rerun (imports)
 * idempotently. Each running job names its owner process and beats a heartbeat, so a CLI
 * command and a server working on the same data dir leave each other's jobs alone.
 */
export class JobQueue {
  private handlers = new Map<string, JobHandler<never>>();
  private readonly background: string[] = [];
  private running = new Map<number, { controller: AbortController; promise: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];
  private readonly instance = randomUUID();
  private readonly owner = `${os.hostname()}:${process.pid}:${this.instance}`;
  private lastBeat = 0;
  private readonly listeners: JobListener[] = [];

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly concurrency: number,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  /** `background`: claimed only when no other job is queued (work nobody waits for, such as learning ranking models). */
  register<P>(kind: string, handler: JobHandler<P>, options: { background?: boolean } = {}): void {
    this.handlers.set(kind, handler as JobHandler<never>);
    if (options.background) this.background.push(kind);
  }

  /** Adds a listener told of every job run that ends in this process (for /metrics). */
  observe(listener: JobListener): void {
    this.listeners.push(listener);
  }

  private told(kind: string, outcome: Parameters<JobListener>[1], startedMs: number): void {
    for (const l of this.listeners) l(kind, outcome, (performance.now() - startedMs) / 1000);
  }

  /** Place of a queued job in the order jobs are taken (null when it is not queued). */
  position(id: number): number | null {
    return this.store.jobs.position(id, this.background);
  }

  /** `teamspaceId`: the teamspace the job belongs to (default: its member's, else its private library's). */
  enqueue<P>(
    kind: string,
    payload: P,
    options: { libraryId?: string | null; memberId?: number | null; teamspaceId?: number | null } = {},
  ): { id: number; position: number | null } {
    const id = this.store.jobs.insert(kind, payload, options.libraryId ?? null, options.memberId ?? null, this.now(), options.teamspaceId ?? null);
    const startsNow = !this.stopped && this.running.size < this.concurrency && this.handlers.has(kind) && this.store.jobs.counts().queued === 1;
    const position = startsNow ? null : this.position(id);
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

  /** Queues a finished job's input again as a new job (same kind, payload, library, member and teamspace). */
  rerun(id: number): { id: number; position: number | null } {
    const job = this.get(id);
    return this.enqueue(job.kind, job.payload, { libraryId: job.libraryId, memberId: job.memberId, teamspaceId: job.teamspaceId });
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
    liveInstances.add(this.instance);
    this.recoverOrphans();
    this.timer = setInterval(() => this.tick(), 500);
    this.timer.unref();
    this.kick();
  }

  /** Stops taking jobs and aborts running ones; they go back to the queue and resume on the next start. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const interrupted = [...this.running.keys()];
    for (const r of this.running.values()) r.controller.abort(new Error('shutdown'));
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
    this.store.jobs.requeue(interrupted, this.now());
    liveInstances.delete(this.instance);
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

  private tick(): void {
    const nowMs = Date.now();
    if (nowMs - this.lastBeat >= HEARTBEAT_MS) {
      this.lastBeat = nowMs;
      if (this.running.size > 0) this.store.jobs.heartbeat([...this.running.keys()], this.now());
      this.recoverOrphans();
    }
    this.kick();
  }

  /** Queues again the running jobs whose process is gone (crashed or killed). */
  private recoverOrphans(): void {
    const nowMs = Date.now();
    const orphans = this.store.jobs
      .runningOwners()
      .filter((j) => j.owner !== this.owner && ownerIsGone(j.owner, j.heartbeatAt, nowMs))
      .map((j) => j.id);
    if (orphans.length === 0) return;
    const requeued = this.store.jobs.requeue(orphans, this.now());
    if (requeued > 0) this.log.info({ requeued, jobs: orphans }, 'jobs left running by a stopped process were queued again');
  }

  private kick(): void {
    if (this.stopped) return;
    while (this.running.size < this.concurrency) {
      const job = this.store.jobs.claim([...this.handlers.keys()], this.owner, this.now(), this.background);
      if (!job) break;
      this.run(job);
    }
  }

  private run(job: Job): void {
    const handler = this.handlers.get(job.kind) as JobHandler<unknown>;
    const controller = new AbortController();
    const log = this.log.child({ jobId: job.id, kind: job.kind });
    const promise = (async () => {
      const startedMs = performance.now();
      log.info({ attempt: job.attempts }, 'job started');
      try {
        if (job.cancelRequested) throw new JobCancelled('cancelled');
        await handler({
          job,
          signal: controller.signal,
          progress: (p) => this.store.jobs.setProgress(job.id, p, this.now()),
          checkCancelled: cancelCheck(controller.signal, () => this.store.jobs.isCancelRequested(job.id)),
          othersWaiting: () => this.store.jobs.queuedBesides(this.background),
          log,
        });
        this.store.jobs.finish(job.id, 'succeeded', null, this.now());
        this.told(job.kind, 'succeeded', startedMs);
        log.info('job succeeded');
      } catch (err) {
        if (this.stopped && !(err instanceof JobCancelled)) {
          log.warn('job interrupted by shutdown; it resumes on next start');
          this.told(job.kind, 'interrupted', startedMs);
          return;
        }
        const cancelled = err instanceof JobCancelled || this.store.jobs.isCancelRequested(job.id);
        const message = err instanceof Error ? err.message : String(err);
        this.store.jobs.finish(
          job.id,
          cancelled ? 'cancelled' : 'failed',
          cancelled ? 'cancelled' : message,
          this.now(),
          !cancelled && err instanceof ApiError ? err.code : null,
        );
        this.told(job.kind, cancelled ? 'cancelled' : 'failed', startedMs);
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
/** A job's cancel check: its signal (a cancel in this process, a shutdown), then the job row (a cancel from another process). */
export function cancelCheck(signal: AbortSignal, requestedElsewhere: () => boolean): () => void {
  return () => {
    throwIfCancelled(signal);
    if (requestedElsewhere()) throw new JobCancelled('cancelled');
  };
}

export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new JobCancelled('cancelled');
}
