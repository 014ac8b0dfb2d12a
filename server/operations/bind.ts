import type { z } from 'zod';
import type { Principal } from '../../lib/model.ts';
import type { LocalOperation, Operation } from '../contracts/operation.ts';
import { validate } from '../../lib/validate.ts';
import { ApiError } from '../../lib/errors.ts';
import { ANONYMOUS, keyActor, operatorActor, safeDetail, type AuditActor, type AuditLog } from '../audit/log.ts';
import { admit, type AdmitDeps, type Caller } from './admit.ts';

/** An operation bound to its service: raw input and a caller in, the service's answer out. */
export type Bound<O> = (raw: unknown, caller: Caller) => Promise<O>;

/**
 * What an operation tells the audit log about one call: the teamspace a local caller acted in
 * (a key's entry is its teamspace's; the operator's is the instance's unless the operation says).
 */
export interface AuditNote {
  teamspaceId: number | null;
}

export interface BindDeps extends AdmitDeps {
  /** Where changes and refusals are recorded; null records nothing. */
  audit: AuditLog | null;
}

/**
 * Binds operations to their services. Every state-changing operation that needs a key (imports,
 * sources, keys, members, policies, rules, visibility, job cancels) is recorded in the audit log
 * with its outcome, whoever calls it: REST, MCP or the CLI. A missing or invalid key, on any
 * operation, is recorded as a refused authentication.
 */
export function binder(deps: BindDeps) {
  return <I extends z.ZodType, O>(
    op: Operation<I> | LocalOperation<I>,
    run: (input: z.output<I>, principal: Principal | null, caller: Caller, note: AuditNote) => O | Promise<O>,
  ): Bound<O> =>
    async (raw, caller) => {
      let out: O;
      const note: AuditNote = { teamspaceId: null };
      try {
        const principal = admit(deps, op.access, caller);
        out = await run(validate(op.input, raw), principal, caller, note);
      } catch (err) {
        await noteRefusal(deps, op, caller, raw, err, note);
        throw err;
      }
      if (audited(op) && deps.audit)
        await deps.audit.record({
          actor: actorOf(caller, note),
          action: op.id,
          target: targetOf(raw, out),
          sourceIp: ipOf(caller),
          outcome: 'ok',
          detail: safeDetail(raw),
        });
      return out;
    };
}

/** Checks only who may call (before an upload is read); a refusal is recorded as the operation's would be. */
export function admitter(deps: BindDeps) {
  return (op: Operation | LocalOperation, caller: Caller): Principal | null => {
    try {
      return admit(deps, op.access, caller);
    } catch (err) {
      // Recording never fails (AuditLog reports its own errors); the refusal is thrown now, before an upload is read.
      void noteRefusal(deps, op, caller, undefined, err);
      throw err;
    }
  };
}

/** State-changing operations that need a key, those a contract marks (exports), and the local ones that say so. */
function audited(op: Operation | LocalOperation): boolean {
  if (!('http' in op)) return op.audit;
  return op.audit ?? (op.access.caller === 'key' && op.http.method !== 'get');
}

function noteRefusal(
  deps: BindDeps,
  op: Operation | LocalOperation,
  caller: Caller,
  raw: unknown,
  err: unknown,
  note: AuditNote = { teamspaceId: null },
): Promise<void> {
  if (!deps.audit) return Promise.resolve();
  const code = err instanceof ApiError ? err.code : 'internal_error';
  if (code === 'invalid_api_key') return deps.audit.refusedAuth(ipOf(caller), `${op.id}: no valid API key`);
  if (!audited(op)) return Promise.resolve();
  const refused = err instanceof ApiError && (err.status === 401 || err.status === 403);
  return deps.audit.record({
    actor: actorOf(caller, note),
    action: op.id,
    target: targetOf(raw, null),
    sourceIp: ipOf(caller),
    outcome: refused ? 'refused' : 'failed',
    detail: { ...safeDetail(raw), error: code },
  });
}

function actorOf(caller: Caller, note: AuditNote): AuditActor {
  if (caller.kind === 'local') return { ...operatorActor(), teamspaceId: note.teamspaceId };
  return caller.principal ? keyActor(caller.principal) : ANONYMOUS;
}

function ipOf(caller: Caller): string | null {
  return caller.kind === 'key' ? (caller.ip ?? null) : null;
}

/** Fields that name what an operation acts on, in the input, then in the answer. */
const INPUT_TARGETS = [
  'libraryId',
  'repoUrl',
  'host',
  'websiteUrl',
  'openApiUrl',
  'llmstxtUrl',
  'collectionName',
  'projectTitle',
  'libraryTitle',
  'name',
  'archive',
  'out',
];
const RESULT_TARGETS = ['libraryName', 'project'];

/** What an operation acted on, for the log: a library, an address, a name, or `#<id>`. */
export function targetOf(input: unknown, result: unknown): string | null {
  const i = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  const r = (result && typeof result === 'object' ? result : {}) as Record<string, unknown>;
  for (const k of INPUT_TARGETS) if (typeof i[k] === 'string' && i[k]) return i[k];
  if (Array.isArray(i.library) && i.library.length) return i.library.slice(0, 20).join(', ');
  if (typeof i.library === 'string' && i.library) return i.library;
  for (const k of RESULT_TARGETS) if (typeof r[k] === 'string' && r[k]) return r[k];
  if (Array.isArray(r.queued) && r.queued.length) return r.queued.slice(0, 20).join(', ');
  const id = i.id ?? r.id;
  return typeof id === 'string' || typeof id === 'number' ? `#${id}` : null;
}
