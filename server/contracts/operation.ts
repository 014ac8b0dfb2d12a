import { z } from 'zod';
import type { Role } from '../../lib/model.ts';
import type { PolicySourceType } from './policy.ts';

/**
 * One operation of the service layer as every entry point sees it: its input schema (the one
 * contract REST, MCP and the CLI validate against), who may call it, and where it lives in the
 * HTTP API (for the OpenAPI description). Pure data: no service is imported here.
 */

/** Who may call an operation; checked by the service layer (server/operations), never by a route. */
export type Access =
  /** Anyone (liveness, health, license, this description). */
  | { caller: 'open' }
  /** Search and read: anonymous callers too, unless the instance requires a key for search. */
  | { caller: 'search' }
  /** Any valid key (optionally only these roles), plus a valid license and an enabled source type. */
  | { caller: 'key'; roles?: readonly Role[]; license?: string | true; source?: PolicySourceType };

/** Only the local operator: the `stacks` command on the data dir (a key is refused). */
export type LocalAccess = { caller: 'local' };

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface HttpBinding {
  method: HttpMethod;
  /** OpenAPI path template, e.g. `/api/jobs/{id}`. */
  path: string;
  /** Where the input comes from. `multipart` lists the file fields beside the validated text fields. */
  from: 'query' | 'body' | 'path' | 'path+query' | 'path+body' | 'multipart';
  files?: { name: string; description: string; maxCount: number }[];
  /** Success status and the response body schema (null: no body). */
  status: number;
  response: z.ZodType | null;
  /** text/plain alternative (the `type=txt` answers). */
  text?: boolean;
}

export interface Operation<I extends z.ZodType = z.ZodType> {
  id: string;
  summary: string;
  input: I;
  access: Access;
  http: HttpBinding;
  /** Error codes this operation answers besides validation_error (for the OpenAPI description). */
  errors?: string[];
  /** Recorded in the audit log although it changes nothing (an export: data leaves the box). Default: state-changing operations that need a key. */
  audit?: boolean;
}

export function defineOperation<I extends z.ZodType>(op: Operation<I>): Operation<I> {
  return op;
}

/**
 * An operation only the local operator calls (the `stacks` command working on the data dir):
 * managing teamspaces across the instance, writing a backup into a folder of the box, and the
 * like. It is validated, admitted and audited like every operation, but has no HTTP binding: it
 * is neither in the OpenAPI description nor in OPERATIONS (server/contracts/index.ts), and a key
 * calling it is refused. `audit` says whether it is recorded (there is no HTTP method to tell).
 */
export interface LocalOperation<I extends z.ZodType = z.ZodType> {
  id: string;
  summary: string;
  input: I;
  access: LocalAccess;
  audit: boolean;
}

export function defineLocalOperation<I extends z.ZodType>(op: LocalOperation<I>): LocalOperation<I> {
  return op;
}

/** A numeric id in a path (`/api/jobs/{id}`). */
export const idInput = z.object({ id: z.coerce.number().int().positive() });

/** The roles that manage a teamspace. */
export const ADMINS: readonly Role[] = ['owner', 'admin'];
