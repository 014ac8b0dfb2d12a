import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../log.ts';
import type { Stores } from '../../store/stores.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { ApiError } from '../../../lib/errors.ts';
import { operatorSubmitter } from '../../../lib/owner.ts';
import type { LibraryVisibility } from '../../../lib/model.ts';
import { DECLARED_KINDS, type SubmitContext } from './kinds.ts';
import { parseSourcesFile, type DeclaredEntry } from './file.ts';

export const SOURCES_FILE = 'sources.yaml';

export interface ReconcileReport {
  file: string;
  /** False when the data dir has no sources.yaml: nothing is declared, and nothing is pruned. */
  found: boolean;
  created: { libraryId: string; jobId: number }[];
  /** Options changed (re-indexed: jobId), or only the schedule or visibility (jobId null). */
  updated: { libraryId: string; jobId: number | null }[];
  unchanged: string[];
  /** Libraries the file created and no longer declares: deleted. */
  pruned: string[];
  /** Libraries that existed before the file declared them: now managed by it, never deleted by it. */
  adopted: string[];
  /** Adopted libraries the file no longer declares: let go, not deleted. */
  released: string[];
  /** Entries that could not be applied now (a fetch failed, a job is running, no license); tried again at the next reconcile. */
  errors: { libraryId: string; line: number; error: string }[];
}

export interface DeclaredSourcesDeps {
  store: Pick<Stores, 'declared' | 'libraries'>;
  dataDir: string;
  log: Logger;
  submit: SubmitContext;
  defaultTeamspaceId(): number;
  /** A pruned library's queued and running jobs are cancelled before it is deleted. */
  jobs: Pick<JobQueue, 'list' | 'cancel'>;
  now?: () => string;
}

/**
 * Declarative sources: <dataDir>/sources.yaml lists websites, llms.txt files and OpenAPI documents;
 * reconciling makes the instance match it: new entries are queued, entries whose options changed
 * are indexed again, and libraries the file created and no longer lists are deleted. Ownership is
 * kept in the database (store/declared.ts), so a library added by hand is never deleted by it.
 */
export class DeclaredSources {
  private running: Promise<ReconcileReport> | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly d: DeclaredSourcesDeps) {}

  get file(): string {
    return path.join(this.d.dataDir, SOURCES_FILE);
  }

  /** One reconcile at a time: a second call while one runs is a conflict. */
  reconcile(): Promise<ReconcileReport> {
    if (this.running) return Promise.reject(new ApiError('conflict', 'sources.yaml is being reconciled right now; try again when it is done.'));
    this.running = this.apply().finally(() => (this.running = null));
    return this.running;
  }

  /** Called after each reconcile (the schedule task reloads the declared schedules). */
  onSchedulesChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Declared sources with a schedule (for the schedule task). */
  async schedules(): Promise<{ libraryId: string; schedule: string }[]> {
    return (await this.d.store.declared.list()).flatMap((r) => (r.schedule ? [{ libraryId: r.libraryId, schedule: r.schedule }] : []));
  }

  /** Indexes a declared source again (its schedule fired). */
  async reindex(libraryId: string): Promise<number> {
    const row = await this.d.store.declared.get(libraryId);
    const kind = DECLARED_KINDS.find((k) => k.key === row?.kind);
    if (!row || !kind) throw new ApiError('library_not_found', `${libraryId} is not a declared source.`);
    const r = await kind.submit(row.spec, true, this.who(row.spec), this.d.submit);
    return r.jobId;
  }

  private async apply(): Promise<ReconcileReport> {
    const report: ReconcileReport = {
      file: this.file,
      found: fs.existsSync(this.file),
      created: [],
      updated: [],
      unchanged: [],
      pruned: [],
      adopted: [],
      released: [],
      errors: [],
    };
    if (!report.found) return report;
    const entries = parseSourcesFile(fs.readFileSync(this.file, 'utf8'), SOURCES_FILE);
    const previous = new Map((await this.d.store.declared.list()).map((r) => [r.libraryId, r]));
    for (const e of entries) {
      previous.delete(e.libraryId);
      try {
        await this.applyEntry(e, report);
      } catch (err) {
        report.errors.push({ libraryId: e.libraryId, line: e.line, error: err instanceof Error ? err.message : String(err) });
      }
    }
    for (const row of previous.values()) {
      if (row.created) {
        if (await this.d.store.libraries.get(row.libraryId)) await this.deleteLibrary(row.libraryId);
        report.pruned.push(row.libraryId);
      } else report.released.push(row.libraryId);
      await this.d.store.declared.delete(row.libraryId);
    }
    for (const l of this.listeners) l();
    this.d.log.info(
      {
        created: report.created.length,
        updated: report.updated.length,
        unchanged: report.unchanged.length,
        pruned: report.pruned.length,
        errors: report.errors.length,
      },
      'sources.yaml reconciled',
    );
    return report;
  }

  private async applyEntry(e: DeclaredEntry, report: ReconcileReport): Promise<void> {
    const row = await this.d.store.declared.get(e.libraryId);
    const exists = (await this.d.store.libraries.get(e.libraryId)) !== null;
    const print = fingerprint(e.entry);
    const record = (created: boolean, jobId: number | null) =>
      this.d.store.declared.put(
        {
          libraryId: e.libraryId,
          kind: e.kind.key,
          spec: e.entry,
          fingerprint: print,
          schedule: typeof e.entry.schedule === 'string' ? e.entry.schedule : null,
          created,
          jobId,
        },
        this.now(),
      );
    if (!row && exists) {
      await record(false, null);
      report.adopted.push(e.libraryId);
    } else if (!row || !exists) {
      // New, or declared but gone (deleted by hand, or its first build failed): index it.
      const r = await e.kind.submit(e.entry, false, this.who(e.entry), this.d.submit);
      await record(row?.created ?? true, r.jobId);
      report.created.push({ libraryId: e.libraryId, jobId: r.jobId });
    } else if (row.fingerprint !== print) {
      const r = await e.kind.submit(e.entry, true, this.who(e.entry), this.d.submit);
      await record(row.created, r.jobId);
      report.updated.push({ libraryId: e.libraryId, jobId: r.jobId });
    } else if (JSON.stringify(row.spec) !== JSON.stringify(e.entry)) {
      await record(row.created, null);
      report.updated.push({ libraryId: e.libraryId, jobId: null });
    } else report.unchanged.push(e.libraryId);
  }

  /** Declared sources are added by the operator, in the default teamspace, instance-wide unless the entry says teamspace. */
  /** A library no longer declared: its queued and running jobs cancelled, then it is deleted with every version. */
  private async deleteLibrary(libraryId: string): Promise<void> {
    for (const state of ['queued', 'running'] as const) for (const j of await this.d.jobs.list({ libraryId, state })) await this.d.jobs.cancel(j.id);
    await this.d.store.libraries.delete(libraryId);
  }

  private who(entry: Record<string, unknown>) {
    return operatorSubmitter(this.d.defaultTeamspaceId(), (entry.visibility as LibraryVisibility | undefined) ?? 'instance');
  }

  private now(): string {
    return (this.d.now ?? (() => new Date().toISOString()))();
  }
}

/** What indexing depends on: every option but the schedule and the visibility (neither needs a rebuild). */
function fingerprint(entry: Record<string, unknown>): string {
  const { schedule: _s, visibility: _v, ...rest } = entry;
  const sorted = Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)));
  return crypto.createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 32);
}
