import type { Job, JobState } from '../../../lib/model.ts';
import { toJob, type JobGuard, type JobRow, type JobStore, type QueueDecision, type QueueView } from '../jobs.ts';
import type { LibraryStore } from '../libraries.ts';
import type { PgPool } from './pool.ts';
import type { SameShape } from './same-shape.ts';
import { pgQuery, withTransaction } from './transaction.ts';

/** The key space of the per-library advisory locks of a check-then-queue ("SJ"). */
const JOBS_LOCK = 0x534a;

/**
 * The job rows on PostgreSQL, method for method SQLite's JobStore (server/store/jobs.ts). What differs
 * is how a job is taken: several nodes claim at once, so the next row is locked with
 * `FOR UPDATE SKIP LOCKED` and each node gets a different job, or none, never the same one.
 */
export class PgJobStore implements SameShape<JobStore> {
  constructor(
    private readonly pool: PgPool,
    private readonly libraries: Pick<SameShape<LibraryStore>, 'get' | 'currentVersion'>,
  ) {}

  /**
   * Serialises the check-then-queue of one library across nodes (SQLite: an IMMEDIATE transaction);
   * held to the end of the caller's transaction.
   */
  private async lockLibrary(libraryId: string | null): Promise<void> {
    await pgQuery(this.pool, 'SELECT pg_advisory_xact_lock($1, hashtext($2))', [JOBS_LOCK, libraryId ?? '']);
  }

  /** SQLite's queueEach: each entry decided and queued in one transaction, its library locked first. */
  async queueEach<T>(
    entries: readonly T[],
    keyOf: (entry: T) => { kind: string; libraryId: string; tag: string },
    decide: (entry: T, view: QueueView) => QueueDecision,
    now: string,
  ): Promise<({ id: number } | { skip: string })[]> {
    return withTransaction(this.pool, async () => {
      const out: ({ id: number } | { skip: string })[] = [];
      for (const entry of entries) {
        const k = keyOf(entry);
        await this.lockLibrary(k.libraryId);
        const view: QueueView = {
          library: await this.libraries.get(k.libraryId),
          served: (await this.libraries.currentVersion(k.libraryId, k.tag)) !== null,
          pending: await this.active(k.kind, k.libraryId),
        };
        const d = decide(entry, view);
        out.push('skip' in d ? d : { id: await this.insert(d.kind, d.payload, d.libraryId, d.memberId, now, d.teamspaceId) });
      }
      return out;
    });
  }

  /** SQLite's insertUnless: the guard's check and the insert in one transaction, the library locked. */
  async insertUnless(
    kind: string,
    payload: unknown,
    libraryId: string | null,
    memberId: number | null,
    now: string,
    teamspaceId: number | null,
    guard: JobGuard,
  ): Promise<{ id: number; created: boolean }> {
    return withTransaction(this.pool, async () => {
      await this.lockLibrary(libraryId);
      const { rows } = await pgQuery<JobRow>(
        this.pool,
        'SELECT * FROM jobs WHERE library_id IS NOT DISTINCT FROM $1 AND kind = ANY($2::text[]) AND state = ANY($3::text[]) ORDER BY id DESC LIMIT $4',
        [libraryId, guard.kinds, guard.states ?? ['queued', 'running'], guard.limit ?? 1000],
      );
      const found = rows.map(toJob).find((j) => guard.match?.(j) ?? true);
      if (found) return { id: found.id, created: false };
      return { id: await this.insert(kind, payload, libraryId, memberId, now, teamspaceId), created: true };
    });
  }

  /** Of these jobs, those whose cancel was asked (by any node). */
  async cancelRequested(ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const { rows } = await pgQuery<{ id: number }>(this.pool, 'SELECT id FROM jobs WHERE cancel_requested = 1 AND id = ANY($1::bigint[]) ORDER BY id', [ids]);
    return rows.map((r) => r.id);
  }

  async insert(
    kind: string,
    payload: unknown,
    libraryId: string | null,
    memberId: number | null,
    now: string,
    teamspaceId: number | null = null,
  ): Promise<number> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      `INSERT INTO jobs (kind, state, library_id, payload_json, member_id, teamspace_id, created_at, updated_at)
       VALUES ($1, 'queued', $2, $3, $4, coalesce($5, (SELECT teamspace_id FROM members WHERE id = $4),
         (SELECT teamspace_id FROM libraries WHERE id = $2 AND visibility = 'teamspace')), $6, $6)
       RETURNING id`,
      [kind, libraryId, JSON.stringify(payload ?? {}), memberId, teamspaceId, now],
    );
    return rows[0].id;
  }

  async get(id: number): Promise<Job | null> {
    const { rows } = await pgQuery<JobRow>(this.pool, 'SELECT * FROM jobs WHERE id = $1', [id]);
    return rows[0] ? toJob(rows[0]) : null;
  }

  async list(filter: { state?: JobState; kind?: string; libraryId?: string; limit?: number; teamspaceId?: number } = {}): Promise<Job[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: (n: string) => string, value: unknown) => {
      args.push(value);
      where.push(clause(`$${args.length}`));
    };
    if (filter.state) add((n) => `state = ${n}`, filter.state);
    if (filter.kind) add((n) => `kind = ${n}`, filter.kind);
    if (filter.libraryId) add((n) => `library_id = ${n}`, filter.libraryId);
    if (filter.teamspaceId !== undefined) add((n) => `(teamspace_id IS NULL OR teamspace_id = ${n})`, filter.teamspaceId);
    args.push(filter.limit ?? 100);
    const sql = `SELECT * FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${args.length}`;
    return (await pgQuery<JobRow>(this.pool, sql, args)).rows.map(toJob);
  }

  /** Place of a queued job in the claim order (background kinds after every other queued job), else null. */
  async position(id: number, background: readonly string[] = []): Promise<number | null> {
    const { rows } = await pgQuery<{ state: JobState; kind: string }>(this.pool, 'SELECT state, kind FROM jobs WHERE id = $1', [id]);
    const r = rows[0];
    if (!r || r.state !== 'queued') return null;
    const sql = background.includes(r.kind)
      ? "SELECT count(*)::int AS n FROM jobs WHERE state = 'queued' AND (kind <> ALL($1::text[]) OR id <= $2)"
      : "SELECT count(*)::int AS n FROM jobs WHERE state = 'queued' AND kind <> ALL($1::text[]) AND id <= $2";
    return (await pgQuery<{ n: number }>(this.pool, sql, [background, id])).rows[0].n;
  }

  /** Takes the next queued job of these kinds for `owner` (background kinds last); concurrent claims skip each other's row. */
  async claim(kinds: string[], owner: string, now: string, background: readonly string[] = []): Promise<Job | null> {
    if (kinds.length === 0) return null;
    const { rows } = await pgQuery<JobRow>(
      this.pool,
      `UPDATE jobs SET state = 'running', attempts = attempts + 1, owner = $3, heartbeat_at = $4, started_at = coalesce(started_at, $4), updated_at = $4
       WHERE id = (SELECT id FROM jobs WHERE state = 'queued' AND kind = ANY($1::text[])
                   ORDER BY kind = ANY($2::text[]), id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [kinds, background, owner, now],
    );
    return rows[0] ? toJob(rows[0]) : null;
  }

  async runningOwners(): Promise<{ id: number; owner: string | null; heartbeatAt: string | null }[]> {
    return (
      await pgQuery<{ id: number; owner: string | null; heartbeatAt: string | null }>(
        this.pool,
        `SELECT id, owner, heartbeat_at AS "heartbeatAt" FROM jobs WHERE state = 'running'`,
      )
    ).rows;
  }

  /** SQLite's heartbeat: the ids `owner` still holds, their heartbeat beaten. */
  async heartbeat(ids: number[], owner: string, now: string): Promise<number[]> {
    const { rows } = await pgQuery<{ id: number }>(
      this.pool,
      "UPDATE jobs SET heartbeat_at = $1 WHERE id = ANY($2::bigint[]) AND state = 'running' AND owner = $3 RETURNING id",
      [now, ids, owner],
    );
    const held = new Set(rows.map((r) => r.id));
    return ids.filter((id) => held.has(id));
  }

  /** SQLite's requeueIfUnchanged: each orphan queued again only if still running with the owner and heartbeat seen. */
  async requeueIfUnchanged(seen: readonly { id: number; owner: string | null; heartbeatAt: string | null }[], now: string): Promise<number> {
    if (seen.length === 0) return 0;
    const r = await pgQuery(
      this.pool,
      `UPDATE jobs j SET state = 'queued', owner = NULL, updated_at = $1
       FROM unnest($2::bigint[], $3::text[], $4::text[]) AS s(id, owner, heartbeat_at)
       WHERE j.id = s.id AND j.state = 'running' AND j.owner IS NOT DISTINCT FROM s.owner AND j.heartbeat_at IS NOT DISTINCT FROM s.heartbeat_at`,
      [now, seen.map((j) => j.id), seen.map((j) => j.owner), seen.map((j) => j.heartbeatAt)],
    );
    return r.rowCount ?? 0;
  }

  /** Queues running jobs again; only rows still running. */
  async requeue(ids: number[], now: string): Promise<number> {
    const r = await pgQuery(this.pool, "UPDATE jobs SET state = 'queued', owner = NULL, updated_at = $1 WHERE id = ANY($2::bigint[]) AND state = 'running'", [
      now,
      ids,
    ]);
    return r.rowCount ?? 0;
  }

  async setProgress(id: number, progress: Record<string, unknown>, now: string, owner: string | null = null): Promise<boolean> {
    const r = await pgQuery(
      this.pool,
      "UPDATE jobs SET progress_json = $1, updated_at = $2 WHERE id = $3 AND ($4::text IS NULL OR (owner = $4 AND state = 'running'))",
      [JSON.stringify(progress), now, id, owner],
    );
    return r.rowCount === 1;
  }

  async finish(
    id: number,
    state: 'succeeded' | 'failed' | 'cancelled',
    error: string | null,
    now: string,
    code: string | null = null,
    owner: string | null = null,
  ): Promise<boolean> {
    const r = await pgQuery(
      this.pool,
      "UPDATE jobs SET state = $1, error = $2, error_code = $3, finished_at = $4, updated_at = $4 WHERE id = $5 AND ($6::text IS NULL OR (owner = $6 AND state = 'running'))",
      [state, error, code, now, id, owner],
    );
    return r.rowCount === 1;
  }

  /** One statement: the flag, and a still-queued job cancelled at once. */
  async requestCancel(id: number, now: string): Promise<void> {
    await pgQuery(
      this.pool,
      `UPDATE jobs SET cancel_requested = 1, updated_at = $1,
         state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END,
         finished_at = CASE WHEN state = 'queued' THEN $1 ELSE finished_at END
       WHERE id = $2`,
      [now, id],
    );
  }

  async isCancelRequested(id: number): Promise<boolean> {
    const { rows } = await pgQuery<{ cancel_requested: number }>(this.pool, 'SELECT cancel_requested FROM jobs WHERE id = $1', [id]);
    return rows[0]?.cancel_requested === 1;
  }

  async active(kind: string, libraryId: string): Promise<Job[]> {
    const { rows } = await pgQuery<JobRow>(this.pool, "SELECT * FROM jobs WHERE kind = $1 AND library_id = $2 AND state IN ('queued','running') ORDER BY id", [
      kind,
      libraryId,
    ]);
    return rows.map(toJob);
  }

  async queuedBesides(kinds: readonly string[]): Promise<boolean> {
    const { rows } = await pgQuery(this.pool, "SELECT 1 FROM jobs WHERE state = 'queued' AND kind <> ALL($1::text[]) LIMIT 1", [kinds]);
    return rows.length > 0;
  }

  async counts(teamspaceId?: number): Promise<Record<JobState, number>> {
    const out: Record<JobState, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
    const { rows } =
      teamspaceId === undefined
        ? await pgQuery<{ state: JobState; n: number }>(this.pool, 'SELECT state, count(*)::int AS n FROM jobs GROUP BY state')
        : await pgQuery<{ state: JobState; n: number }>(
            this.pool,
            'SELECT state, count(*)::int AS n FROM jobs WHERE teamspace_id IS NULL OR teamspace_id = $1 GROUP BY state',
            [teamspaceId],
          );
    for (const r of rows) out[r.state] = r.n;
    return out;
  }
}
