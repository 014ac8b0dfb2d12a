import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Stores } from '../store/stores.ts';
import type { JobGuard, QueueDecision, QueueView } from '../store/jobs.ts';
import type { Job } from '../../lib/model.ts';
import type { Logger } from '../log.ts';
import { ApiError } from '../../lib/errors.ts';

export interface JobContext<P> {
  job: Job<P>;
  /** Aborted when the job is cancelled, the server shuts down, or another process took the job over (JobLeaseLost). */
  signal: AbortSignal;
  /** Records progress on the job row (shown by GET /api/jobs/:id and `stacks jobs show`); written in order, in the background, before the job ends. */
  progress(progress: Record<string, unknown>): void;
  /**
   * Throws JobCancelled when the job was cancelled, here or from another process (the CLI on the
   * same data dir; noticed by the queue's tick, within TICK_MS), or the server is stopping.
   */
  checkCancelled(): void;
  /** True when a job somebody waits for (not of a background kind) is queued: a long background job stops at a safe point and queues itself again. */
  othersWaiting(): Promise<boolean>;
  log: Logger;
}

export type JobHandler<P> = (ctx: JobContext<P>) => Promise<void>;

/** Hears every job run that ended here: its kind, how it ended, and how long the handler ran (seconds). */
export type JobListener = (kind: string, outcome: 'succeeded' | 'failed' | 'cancelled' | 'interrupted', seconds: number) => void;

/** This node's leases on jobs (for /api/health and /metrics): held now, and counted since start. */
export interface LeaseStats {
  /** Jobs running here: this node holds their lease and beats their heartbeat. */
  held: number;
  /** Jobs another node took over from this one (it missed their heartbeats); their end was theirs to write. */
  lost: number;
  /** Jobs this node queued again because their owner was gone or stale, for any node to take. */
  recovered: number;
}

/** Thrown by a handler (or raised by the signal) when a job was cancelled. */
export class JobCancelled extends Error {
  override name = 'JobCancelled';
}

/**
 * Raised by the signal when another process took the job over: it saw this one's heartbeat stale
 * (a stall longer than STALE_MS, a node cut from the database) and queued the job again. The job's
 * end is then the new owner's to write.
 */
export class JobLeaseLost extends Error {
  override name = 'JobLeaseLost';
}

/** Queues alive in this process, so that a restarted in-process queue can tell its predecessor is gone. */
const liveInstances = new Set<string>();
const HEARTBEAT_MS = 5_000;
/** How often the queue looks for work, and for cancels requested by another process. */
const TICK_MS = 500;
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
  private leasesLost = 0;
  private jobsRecovered = 0;
  /** The claim loop under way (one at a time, or two loops could claim past `concurrency`), and whether to run it again. */
  private kicking: Promise<void> | null = null;
  private kickAgain = false;
  private ticking = false;

  constructor(
    private readonly store: Stores,
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

  /** The leases this node holds now, those it lost and the orphaned jobs it queued again since start. */
  leases(): LeaseStats {
    return { held: this.running.size, lost: this.leasesLost, recovered: this.jobsRecovered };
  }

  private told(kind: string, outcome: Parameters<JobListener>[1], startedMs: number): void {
    for (const l of this.listeners) l(kind, outcome, (performance.now() - startedMs) / 1000);
  }

  /** Place of a queued job in the order jobs are taken (null when it is not queued). */
  position(id: number): Promise<number | null> {
    return this.store.jobs.position(id, this.background);
  }

  /** `teamspaceId`: the teamspace the job belongs to (default: its member's, else its private library's). */
  async enqueue<P>(
    kind: string,
    payload: P,
    options: { libraryId?: string | null; memberId?: number | null; teamspaceId?: number | null } = {},
  ): Promise<{ id: number; position: number | null }> {
    const id = await this.store.jobs.insert(kind, payload, options.libraryId ?? null, options.memberId ?? null, this.now(), options.teamspaceId ?? null);
    return { id, position: await this.queued(kind, id) };
  }

  /**
   * enqueue() unless a job of the library matches `guard` (JobStore.insertUnless: checked and
   * queued atomically); `created` false names that job instead.
   */
  async enqueueUnless<P>(
    kind: string,
    payload: P,
    options: { libraryId?: string | null; memberId?: number | null; teamspaceId?: number | null },
    guard: JobGuard,
  ): Promise<{ id: number; position: number | null; created: boolean }> {
    const r = await this.store.jobs.insertUnless(
      kind,
      payload,
      options.libraryId ?? null,
      options.memberId ?? null,
      this.now(),
      options.teamspaceId ?? null,
      guard,
    );
    return { ...r, position: r.created ? await this.queued(kind, r.id) : await this.position(r.id) };
  }

  /** Several jobs decided and queued in one transaction (JobStore.queueEach), with their positions. */
  async enqueueEach<T>(
    entries: readonly T[],
    keyOf: (entry: T) => { kind: string; libraryId: string; tag: string },
    decide: (entry: T, view: QueueView) => QueueDecision,
  ): Promise<({ id: number; position: number | null } | { skip: string })[]> {
    const outcomes = await this.store.jobs.queueEach(entries, keyOf, decide, this.now());
    const out: ({ id: number; position: number | null } | { skip: string })[] = [];
    for (const o of outcomes) out.push('skip' in o ? o : { id: o.id, position: await this.position(o.id) });
    this.kick();
    return out;
  }

  /** A job just queued: its position (null when it starts at once), and the worker loop woken. */
  private async queued(kind: string, id: number): Promise<number | null> {
    const startsNow = !this.stopped && this.running.size < this.concurrency && this.handlers.has(kind) && (await this.store.jobs.counts()).queued === 1;
    const position = startsNow ? null : await this.position(id);
    this.kick();
    return position;
  }

  async get(id: number): Promise<Job> {
    const job = await this.store.jobs.get(id);
    if (!job) throw new ApiError('job_not_found', `No job with id ${id}.`);
    return job;
  }

  list(filter: Parameters<Stores['jobs']['list']>[0] = {}): Promise<Job[]> {
    return this.store.jobs.list(filter);
  }

  /** Queues a finished job's input again as a new job (same kind, payload, library, member and teamspace). */
  async rerun(id: number): Promise<{ id: number; position: number | null }> {
    const job = await this.get(id);
    return this.enqueue(job.kind, job.payload, { libraryId: job.libraryId, memberId: job.memberId, teamspaceId: job.teamspaceId });
  }

  async cancel(id: number): Promise<Job> {
    const job = await this.get(id);
    if (job.state === 'queued' || job.state === 'running') {
      await this.store.jobs.requestCancel(id, this.now());
      this.running.get(id)?.controller.abort(new JobCancelled('cancelled'));
    }
    return this.get(id);
  }

  /** Starts the worker loop; call after every handler is registered. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    liveInstances.add(this.instance);
    this.lastBeat = 0;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    // The first tick recovers the jobs of processes that are gone, then claims.
    void this.tick();
  }

  /** Stops taking jobs and aborts running ones; they go back to the queue and resume on the next start. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    // A claim under way ends first: the job it takes is then running here, and queued again below.
    await this.kicking;
    const interrupted = [...this.running.keys()];
    for (const r of this.running.values()) r.controller.abort(new Error('shutdown'));
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
    await this.store.jobs.requeue(interrupted, this.now());
    liveInstances.delete(this.instance);
  }

  /** Resolves when nothing is queued or running (for tests and the CLI). */
  async idle(): Promise<void> {
    for (;;) {
      const c = await this.store.jobs.counts();
      if (c.queued === 0 && c.running === 0 && this.running.size === 0) return;
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  }

  /** Heartbeat and orphans (every HEARTBEAT_MS), cancels from elsewhere, then claims; a tick still under way skips the next. */
  private async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      const nowMs = Date.now();
      if (nowMs - this.lastBeat >= HEARTBEAT_MS) {
        this.lastBeat = nowMs;
        if (this.running.size > 0) {
          const ids = [...this.running.keys()];
          const held = new Set(await this.store.jobs.heartbeat(ids, this.owner, this.now()));
          for (const id of ids.filter((i) => !held.has(i))) this.running.get(id)?.controller.abort(new JobLeaseLost('taken over by another process'));
        }
        await this.recoverOrphans();
      }
      for (const id of await this.store.jobs.cancelRequested([...this.running.keys()])) this.running.get(id)?.controller.abort(new JobCancelled('cancelled'));
    } catch (err) {
      this.log.error({ err }, 'job queue: heartbeat or cancel check failed');
    } finally {
      this.ticking = false;
    }
    this.kick();
  }

  /** Queues again the running jobs whose process is gone (crashed or killed). */
  private async recoverOrphans(): Promise<void> {
    const nowMs = Date.now();
    const orphans = (await this.store.jobs.runningOwners()).filter((j) => j.owner !== this.owner && ownerIsGone(j.owner, j.heartbeatAt, nowMs));
    if (orphans.length === 0) return;
    const requeued = await this.store.jobs.requeueIfUnchanged(orphans, this.now());
    this.jobsRecovered += requeued;
    if (requeued > 0) this.log.info({ requeued, jobs: orphans.map((j) => j.id) }, 'jobs left running by a stopped process were queued again');
  }

  /** Claims jobs up to `concurrency`; one claim loop at a time, run again when asked meanwhile. */
  private kick(): void {
    if (this.stopped) return;
    if (this.kicking) {
      this.kickAgain = true;
      return;
    }
    this.kicking = this.claimJobs()
      .catch((err: unknown) => this.log.error({ err }, 'job queue: could not claim a job'))
      .finally(() => {
        this.kicking = null;
        if (this.kickAgain) {
          this.kickAgain = false;
          this.kick();
        }
      });
  }

  private async claimJobs(): Promise<void> {
    while (!this.stopped && this.running.size < this.concurrency) {
      const job = await this.store.jobs.claim([...this.handlers.keys()], this.owner, this.now(), this.background);
      if (!job) break;
      this.run(job);
    }
  }

  private run(job: Job): void {
    const handler = this.handlers.get(job.kind) as JobHandler<unknown>;
    const controller = new AbortController();
    const log = this.log.child({ jobId: job.id, kind: job.kind });
    // Progress is written in the order reported, and all of it before the job's end is.
    let written: Promise<void> = Promise.resolve();
    const progress = (p: Record<string, unknown>) => {
      const at = this.now();
      written = written
        .then(() => this.store.jobs.setProgress(job.id, p, at, this.owner).then(() => undefined))
        .catch((err: unknown) => log.warn({ err }, 'job progress not written'));
    };
    const promise = (async () => {
      const startedMs = performance.now();
      // Another process queued the job again (this one missed its heartbeats) and owns it now: nothing more is written here.
      const takenOver = (err?: string) => {
        this.leasesLost++;
        log.warn(err === undefined ? {} : { err }, 'job taken over by another process (this one missed its heartbeats): its end is theirs to write');
        this.told(job.kind, 'interrupted', startedMs);
      };
      log.info({ attempt: job.attempts }, 'job started');
      try {
        if (job.cancelRequested) throw new JobCancelled('cancelled');
        await handler({
          job,
          signal: controller.signal,
          progress,
          checkCancelled: () => throwIfCancelled(controller.signal),
          othersWaiting: () => this.store.jobs.queuedBesides(this.background),
          log,
        });
        await written;
        if (!(await this.store.jobs.finish(job.id, 'succeeded', null, this.now(), null, this.owner))) throw new JobLeaseLost('taken over by another process');
        this.told(job.kind, 'succeeded', startedMs);
        log.info('job succeeded');
      } catch (err) {
        if (err instanceof JobLeaseLost || controller.signal.reason instanceof JobLeaseLost) return takenOver();
        if (this.stopped && !(err instanceof JobCancelled)) {
          log.warn('job interrupted by shutdown; it resumes on next start');
          this.told(job.kind, 'interrupted', startedMs);
          return;
        }
        const cancelled = err instanceof JobCancelled || (await this.store.jobs.isCancelRequested(job.id));
        const message = err instanceof Error ? err.message : String(err);
        await written;
        const ended = await this.store.jobs.finish(
          job.id,
          cancelled ? 'cancelled' : 'failed',
          cancelled ? 'cancelled' : message,
          this.now(),
          !cancelled && err instanceof ApiError ? err.code : null,
          this.owner,
        );
        if (!ended) return takenOver(message);
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

/** Throws JobCancelled when the signal was aborted (a cancel here or, through the queue's tick, from another process; a shutdown). */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new JobCancelled('cancelled');
}
