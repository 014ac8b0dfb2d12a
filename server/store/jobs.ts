import type { Db } from './db.ts';
import type { Job, JobState, Library } from '../../lib/model.ts';
import type { LibraryStore } from './libraries.ts';

export interface JobRow {
  id: number;
  kind: string;
  state: JobState;
  library_id: string | null;
  payload_json: string;
  progress_json: string;
  error: string | null;
  error_code: string | null;
  attempts: number;
  cancel_requested: number;
  member_id: number | null;
  teamspace_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

export function toJob(r: JobRow): Job {
  return {
    id: r.id,
    kind: r.kind,
    state: r.state,
    libraryId: r.library_id,
    payload: JSON.parse(r.payload_json) as Record<string, unknown>,
    progress: JSON.parse(r.progress_json) as Record<string, unknown>,
    error: r.error,
    errorCode: r.error_code ?? null,
    attempts: r.attempts,
    cancelRequested: r.cancel_requested === 1,
    memberId: r.member_id,
    teamspaceId: r.teamspace_id,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    updatedAt: r.updated_at,
  };
}

/** What keeps a job from being queued (JobStore.insertUnless). `match` is called inside the transaction: it must only look at the job. */
export interface JobGuard {
  kinds: readonly string[];
  states?: readonly JobState[];
  /** How many of the newest such jobs are looked at (default 1000). */
  limit?: number;
  match?: (job: Job) => boolean;
}

/** What queueEach shows the decision about one entry, read in the transaction that queues it. */
export interface QueueView {
  library: Library | null;
  /** Whether (library, tag) has a served version. */
  served: boolean;
  /** Queued and running jobs of the entry's kind for the library. */
  pending: Job[];
}

/** A job to queue, or the reason an entry is skipped. */
export type QueueDecision = { kind: string; payload: unknown; libraryId: string; memberId: number | null; teamspaceId: number | null } | { skip: string };

/** Durable job rows: the queue survives restarts because it lives here, not in memory. */
export class JobStore {
  constructor(
    private readonly db: Db,
    private readonly libraries: Pick<LibraryStore, 'get' | 'currentVersion'>,
  ) {}

  /**
   * Decides and queues several jobs in one transaction (a bundle's libraries): `decide` sees each
   * entry's library, whether (library, tag) is served and its pending jobs of `kind`, and returns
   * a job or a reason to skip. Two uploads at once cannot both pass the checks; a `decide` that
   * throws queues nothing. It runs inside the transaction: it must only look at what it is given.
   */
  async queueEach<T>(
    entries: readonly T[],
    keyOf: (entry: T) => { kind: string; libraryId: string; tag: string },
    decide: (entry: T, view: QueueView) => QueueDecision,
    now: string,
  ): Promise<({ id: number } | { skip: string })[]> {
    return this.db
      .transaction(() =>
        entries.map((entry) => {
          const k = keyOf(entry);
          const view: QueueView = {
            library: this.libraries.get(k.libraryId),
            served: this.libraries.currentVersion(k.libraryId, k.tag) !== null,
            pending: this.activeRows(k.kind, k.libraryId),
          };
          const d = decide(entry, view);
          return 'skip' in d ? d : { id: this.insertRow(d.kind, d.payload, d.libraryId, d.memberId, now, d.teamspaceId) };
        }),
      )
      .immediate();
  }

  /**
   * A job belongs to `teamspaceId` when given, else to its member's teamspace, else to the
   * teamspace of its library when that library is private; otherwise to none (shown to every teamspace).
   */
  async insert(
    kind: string,
    payload: unknown,
    libraryId: string | null,
    memberId: number | null,
    now: string,
    teamspaceId: number | null = null,
  ): Promise<number> {
    return this.insertRow(kind, payload, libraryId, memberId, now, teamspaceId);
  }

  /**
   * insert() unless a job of `guard.kinds` for the same library (the newest `guard.limit`, in
   * `guard.states`, default queued or running) passes `guard.match` (default: any): then that job's
   * id, with created false. Checked and inserted in one transaction, so two requests at once never
   * queue the same work twice.
   */
  async insertUnless(
    kind: string,
    payload: unknown,
    libraryId: string | null,
    memberId: number | null,
    now: string,
    teamspaceId: number | null,
    guard: JobGuard,
  ): Promise<{ id: number; created: boolean }> {
    return this.db
      .transaction(() => {
        const states = guard.states ?? ['queued', 'running'];
        const rows = this.db
          .prepare(
            `SELECT * FROM jobs WHERE library_id IS ? AND kind IN (${guard.kinds.map(() => '?').join(',')}) AND state IN (${states.map(() => '?').join(',')})
             ORDER BY id DESC LIMIT ?`,
          )
          .all(libraryId, ...guard.kinds, ...states, guard.limit ?? 1000) as JobRow[];
        const found = rows.map(toJob).find((j) => guard.match?.(j) ?? true);
        if (found) return { id: found.id, created: false };
        return { id: this.insertRow(kind, payload, libraryId, memberId, now, teamspaceId), created: true };
      })
      .immediate();
  }

  private insertRow(kind: string, payload: unknown, libraryId: string | null, memberId: number | null, now: string, teamspaceId: number | null): number {
    const info = this.db
      .prepare(
        `INSERT INTO jobs (kind, state, library_id, payload_json, member_id, teamspace_id, created_at, updated_at)
         VALUES (?, 'queued', ?, ?, ?, coalesce(?, (SELECT teamspace_id FROM members WHERE id = ?),
           (SELECT teamspace_id FROM libraries WHERE id = ? AND visibility = 'teamspace')), ?, ?)`,
      )
      .run(kind, libraryId, JSON.stringify(payload ?? {}), memberId, teamspaceId, memberId, libraryId, now, now);
    return Number(info.lastInsertRowid);
  }

  async get(id: number): Promise<Job | null> {
    const r = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
    return r ? toJob(r) : null;
  }

  /** `teamspaceId`: only that teamspace's jobs and those of no teamspace. */
  async list(filter: { state?: JobState; kind?: string; libraryId?: string; limit?: number; teamspaceId?: number } = {}): Promise<Job[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      args.push(value);
    };
    if (filter.state) add('state = ?', filter.state);
    if (filter.kind) add('kind = ?', filter.kind);
    if (filter.libraryId) add('library_id = ?', filter.libraryId);
    if (filter.teamspaceId !== undefined) add('(teamspace_id IS NULL OR teamspace_id = ?)', filter.teamspaceId);
    const sql = `SELECT * FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...args, filter.limit ?? 100) as JobRow[]).map(toJob);
  }

  /** Place of a queued job in the claim order (background kinds after every other queued job), else null. */
  async position(id: number, background: readonly string[] = []): Promise<number | null> {
    const r = this.db.prepare('SELECT state, kind FROM jobs WHERE id = ?').get(id) as { state: JobState; kind: string } | undefined;
    if (!r || r.state !== 'queued') return null;
    const bg = background.map(() => '?').join(',') || "''";
    const n = background.includes(r.kind)
      ? (this.db.prepare(`SELECT count(*) AS n FROM jobs WHERE state = 'queued' AND (kind NOT IN (${bg}) OR id <= ?)`).get(...background, id) as { n: number })
      : (this.db.prepare(`SELECT count(*) AS n FROM jobs WHERE state = 'queued' AND kind NOT IN (${bg}) AND id <= ?`).get(...background, id) as { n: number });
    return n.n;
  }

  /**
   * Atomically takes the next queued job of the given kinds for the process `owner`: the oldest,
   * except that background kinds (model learning) wait while any other job is queued.
   */
  async claim(kinds: string[], owner: string, now: string, background: readonly string[] = []): Promise<Job | null> {
    if (kinds.length === 0) return null;
    return this.db.transaction(() => {
      const bg = background.map(() => '?').join(',') || "''";
      const r = this.db
        .prepare(`SELECT * FROM jobs WHERE state = 'queued' AND kind IN (${kinds.map(() => '?').join(',')}) ORDER BY kind IN (${bg}), id LIMIT 1`)
        .get(...kinds, ...background) as JobRow | undefined;
      if (!r) return null;
      const claimed = this.db
        .prepare(
          "UPDATE jobs SET state = 'running', attempts = attempts + 1, owner = ?, heartbeat_at = ?, started_at = coalesce(started_at, ?), updated_at = ? WHERE id = ? RETURNING *",
        )
        .get(owner, now, now, now, r.id) as JobRow;
      return toJob(claimed);
    })();
  }

  /** Running jobs with their owner and last heartbeat, to find those whose process is gone. */
  async runningOwners(): Promise<{ id: number; owner: string | null; heartbeatAt: string | null }[]> {
    return this.db.prepare("SELECT id, owner, heartbeat_at AS heartbeatAt FROM jobs WHERE state = 'running'").all() as {
      id: number;
      owner: string | null;
      heartbeatAt: string | null;
    }[];
  }

  /**
   * Beats the heartbeat of the running jobs `owner` still holds; the ids it holds. A job missing from
   * the answer was queued again by another process that took its owner for gone (its lease is lost):
   * the owner must stop working on it and leave its end to the new owner.
   */
  async heartbeat(ids: number[], owner: string, now: string): Promise<number[]> {
    const stmt = this.db.prepare("UPDATE jobs SET heartbeat_at = ? WHERE id = ? AND state = 'running' AND owner = ?");
    return this.db.transaction(() => ids.filter((id) => stmt.run(now, id, owner).changes === 1))();
  }

  /**
   * Queues again the orphans another process saw, each only if its row is still as seen (running, the
   * same owner and heartbeat): an owner that beat its heartbeat meanwhile keeps its job, so a job is
   * never run twice because the check and the requeue were apart. The number queued.
   */
  async requeueIfUnchanged(seen: readonly { id: number; owner: string | null; heartbeatAt: string | null }[], now: string): Promise<number> {
    const stmt = this.db.prepare(
      "UPDATE jobs SET state = 'queued', owner = NULL, updated_at = ? WHERE id = ? AND state = 'running' AND owner IS ? AND heartbeat_at IS ?",
    );
    return this.db.transaction(() => seen.reduce((n, j) => n + stmt.run(now, j.id, j.owner, j.heartbeatAt).changes, 0))();
  }

  /** Queues this process's running jobs again (a graceful stop: their handlers resume or rerun); only rows still running. */
  async requeue(ids: number[], now: string): Promise<number> {
    const stmt = this.db.prepare("UPDATE jobs SET state = 'queued', owner = NULL, updated_at = ? WHERE id = ? AND state = 'running'");
    return this.db.transaction(() => ids.reduce((n, id) => n + stmt.run(now, id).changes, 0))();
  }

  /** Writes a running job's progress; with `owner`, only while that owner holds it (false when it does not). */
  async setProgress(id: number, progress: Record<string, unknown>, now: string, owner: string | null = null): Promise<boolean> {
    return (
      this.db
        .prepare(`UPDATE jobs SET progress_json = ?, updated_at = ? WHERE id = ?${owner === null ? '' : " AND owner = ? AND state = 'running'"}`)
        .run(JSON.stringify(progress), now, id, ...(owner === null ? [] : [owner])).changes === 1
    );
  }

  /**
   * Ends a job. `code`: the failure's error code (an ApiError's), which tells whether a retry can help.
   * With `owner`, only while that owner holds it running: false when another process took it over.
   */
  async finish(
    id: number,
    state: 'succeeded' | 'failed' | 'cancelled',
    error: string | null,
    now: string,
    code: string | null = null,
    owner: string | null = null,
  ): Promise<boolean> {
    return (
      this.db
        .prepare(
          `UPDATE jobs SET state = ?, error = ?, error_code = ?, finished_at = ?, updated_at = ? WHERE id = ?${owner === null ? '' : " AND owner = ? AND state = 'running'"}`,
        )
        .run(state, error, code, now, now, id, ...(owner === null ? [] : [owner])).changes === 1
    );
  }

  async requestCancel(id: number, now: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('UPDATE jobs SET cancel_requested = 1, updated_at = ? WHERE id = ?').run(now, id);
      this.db.prepare("UPDATE jobs SET state = 'cancelled', finished_at = ? WHERE id = ? AND state = 'queued'").run(now, id);
    })();
  }

  /** Those of `ids` whose cancel was requested (here or by another process). */
  async cancelRequested(ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    return this.db
      .prepare(`SELECT id FROM jobs WHERE cancel_requested = 1 AND id IN (${ids.map(() => '?').join(',')})`)
      .pluck()
      .all(...ids) as number[];
  }

  async isCancelRequested(id: number): Promise<boolean> {
    const r = this.db.prepare('SELECT cancel_requested FROM jobs WHERE id = ?').get(id) as { cancel_requested: number } | undefined;
    return r?.cancel_requested === 1;
  }

  /** Active (queued or running) jobs for a library, e.g. to avoid queueing the same work twice. */
  async active(kind: string, libraryId: string): Promise<Job[]> {
    return this.activeRows(kind, libraryId);
  }

  private activeRows(kind: string, libraryId: string): Job[] {
    return (
      this.db.prepare("SELECT * FROM jobs WHERE kind = ? AND library_id = ? AND state IN ('queued','running') ORDER BY id").all(kind, libraryId) as JobRow[]
    ).map(toJob);
  }

  /** Whether a job of another kind than these is queued. */
  async queuedBesides(kinds: readonly string[]): Promise<boolean> {
    const marks = kinds.map(() => '?').join(',');
    return this.db.prepare(`SELECT 1 FROM jobs WHERE state = 'queued'${kinds.length ? ` AND kind NOT IN (${marks})` : ''} LIMIT 1`).get(...kinds) !== undefined;
  }

  /** Jobs by state; with `teamspaceId`, only that teamspace's and those of no teamspace (what `list` shows it). */
  async counts(teamspaceId?: number): Promise<Record<JobState, number>> {
    const out: Record<JobState, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
    const rows = (
      teamspaceId === undefined
        ? this.db.prepare('SELECT state, count(*) AS n FROM jobs GROUP BY state').all()
        : this.db.prepare('SELECT state, count(*) AS n FROM jobs WHERE teamspace_id IS NULL OR teamspace_id = ? GROUP BY state').all(teamspaceId)
    ) as { state: JobState; n: number }[];
    for (const r of rows) out[r.state] = r.n;
    return out;
  }
}
