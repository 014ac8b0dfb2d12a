import os from 'node:os';
import type { AuditActorKind, AuditOutcome, AuditQuery, AuditRow } from '../store/audit.ts';
import type { Stores } from '../store/stores.ts';
import type { Principal } from '../../lib/model.ts';
import { isSecretName, redactValue } from '../../lib/redact.ts';

/** Who acted: a key (its member), a signed-in user, the local operator (the CLI on the box), or nobody known. */
export interface AuditActor {
  kind: AuditActorKind;
  keyId: number | null;
  name: string | null;
  /** The actor's teamspace; null for instance-level actions (the operator, unknown keys). */
  teamspaceId: number | null;
}

export interface AuditEvent {
  actor: AuditActor;
  /** The operation's id (`keyCreate`, `importLibraries`, ...) or `authRefused`, `libraryDelete`, ... */
  action: string;
  target?: string | null;
  sourceIp?: string | null;
  outcome: AuditOutcome;
  /** What was asked (never a secret: see safeDetail) and, for a refusal or failure, the error code. */
  detail?: Record<string, unknown> | null;
}

export interface AuditEntryView {
  id: number;
  at: string;
  /** Last occurrence, and how many were aggregated into this entry (refused authentications). */
  lastAt: string;
  count: number;
  actor: { kind: AuditActorKind; keyId?: number; name?: string };
  teamspace: string | null;
  action: string;
  target: string | null;
  sourceIp: string | null;
  outcome: AuditOutcome;
  detail: Record<string, unknown> | null;
}

export const AUTH_REFUSED = 'authRefused';
/** Distinct refused-authentication entries per hour; beyond it they are counted into one entry for address `*`. */
const REFUSALS_PER_HOUR = 1000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** A key's member, or a signed-in user (a console session). */
export function keyActor(p: Principal): AuditActor {
  if (p.userId) return { kind: 'user', keyId: null, name: p.memberName, teamspaceId: p.teamspaceId };
  return { kind: 'key', keyId: p.keyId, name: p.memberName, teamspaceId: p.teamspaceId };
}

/** The CLI on the server's own files, named by the system account that ran it. */
export function operatorActor(): AuditActor {
  let name: string | null = null;
  try {
    name = os.userInfo().username;
  } catch {
    name = null;
  }
  return { kind: 'operator', keyId: null, name, teamspaceId: null };
}

export const ANONYMOUS: AuditActor = { kind: 'anonymous', keyId: null, name: null, teamspaceId: null };

/** Field names whose values are never written (keys, passwords, tokens, license texts), beside lib/redact.ts's. */
const SECRET_FIELD = /key|secret|password|passphrase|token|credential|license|authorization|cookie/i;

const MAX_FIELDS = 50;

/**
 * What of an operation's input goes into the log: no field with a secret's name, short strings,
 * small arrays. The values that remain are redacted by shape when the entry is written (record).
 */
export function safeDetail(input: unknown): Record<string, unknown> | null {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return null;
  const out: Record<string, unknown> = {};
  // No contract has more fields than this; a body of thousands is not written out field by field.
  for (const [k, v] of Object.entries(input).slice(0, MAX_FIELDS)) {
    if (SECRET_FIELD.test(k) || isSecretName(k) || v === undefined) continue;
    out[k] = clip(v, 1);
  }
  return Object.keys(out).length ? out : null;
}

function clip(v: unknown, depth: number): unknown {
  if (typeof v === 'string') {
    // Redacted before it is cut: a secret cut in half no longer has its shape (redactValue reads at most 8 KB of it).
    const text = redactValue(v) as string;
    return text.length > 200 ? `${text.slice(0, 200)}…` : text;
  }
  if (Array.isArray(v)) return v.slice(0, 20).map((x) => clip(x, depth + 1));
  if (v && typeof v === 'object') return depth >= 2 ? '[object]' : safeDetail(v);
  return v;
}

/**
 * The audit log: append-only records of who changed what (imports, crawls and other sources,
 * deletes, visibility, keys, members, policies, rules, license) and of refused authentications,
 * which are aggregated per address and hour so a flood cannot fill the disk. Writing an entry
 * never fails the action it records: a write error is reported to `onError` instead.
 */
export class AuditLog {
  constructor(
    private readonly store: Stores['audit'],
    private readonly retentionDays: number,
    private readonly onError: (err: unknown) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Writes an entry. Whoever built it, what the caller sent is redacted here, by field name and by
   * shape (lib/redact.ts): a key pasted as a name, credentials in a repository URL, a signature in a
   * field of the caller's choosing.
   */
  async record(e: AuditEvent): Promise<void> {
    try {
      await this.store.append({
        at: this.now().toISOString(),
        actor_kind: e.actor.kind,
        actor_key_id: e.actor.keyId,
        actor_name: scrubbed(e.actor.name),
        teamspace_id: e.actor.teamspaceId,
        action: e.action,
        target: scrubbed(e.target ?? null),
        source_ip: e.sourceIp ?? null,
        outcome: e.outcome,
        detail: e.detail ? JSON.stringify(redactValue(e.detail)) : null,
      });
    } catch (err) {
      this.onError(err);
    }
  }

  /** A refused authentication (an invalid or revoked key, a missing one where required): counted per address and hour. */
  async refusedAuth(sourceIp: string | null, reason: string): Promise<void> {
    try {
      const now = this.now();
      const at = now.toISOString();
      const hour = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS).toISOString();
      const entry = {
        at,
        actor_kind: ANONYMOUS.kind,
        actor_key_id: null,
        actor_name: null,
        teamspace_id: null,
        action: AUTH_REFUSED,
        target: null,
        source_ip: sourceIp ?? 'unknown',
        outcome: 'refused' as const,
        detail: JSON.stringify(redactValue({ reason })),
      };
      await this.store.aggregate(entry, hour, REFUSALS_PER_HOUR, '*');
    } catch (err) {
      this.onError(err);
    }
  }

  async list(q: AuditQuery): Promise<{ entries: AuditEntryView[]; next: number | null }> {
    const rows = await this.store.list({ ...q, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    return { entries: page.map(view), next: rows.length > q.limit ? page[page.length - 1]!.id : null };
  }

  /** Deletes entries past the retention; returns how many. */
  async prune(): Promise<number> {
    return this.store.prune(new Date(this.now().getTime() - this.retentionDays * DAY_MS).toISOString());
  }
}

/** A name or target redacted; what a caller sent is read up to 8 KB (redactValue), never whole. */
function scrubbed(text: string | null): string | null {
  return text === null ? null : (redactValue(text) as string);
}

/** An entry as the API shows it; redacted again, for entries written before the rows were. */
function view(r: AuditRow): AuditEntryView {
  return {
    id: r.id,
    at: r.at,
    lastAt: r.last_at,
    count: r.count,
    actor: {
      kind: r.actor_kind,
      ...(r.actor_key_id !== null ? { keyId: r.actor_key_id } : {}),
      ...(r.actor_name !== null ? { name: redactValue(r.actor_name) as string } : {}),
    },
    teamspace: r.teamspace,
    action: r.action,
    target: scrubbed(r.target),
    sourceIp: r.source_ip,
    outcome: r.outcome,
    detail: r.detail ? (redactValue(JSON.parse(r.detail)) as Record<string, unknown>) : null,
  };
}

/** Prunes past the retention at start and then daily, beside the server. Returns a stop function. */
export function auditPruneTask(log: AuditLog, onPruned: (n: number) => void, onError: (err: unknown) => void): () => void {
  const run = () =>
    void log.prune().then((n) => {
      if (n > 0) onPruned(n);
    }, onError);
  run();
  const timer = setInterval(run, DAY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
