import type { z } from 'zod';
import type { Principal } from '../../lib/model.ts';
import type { Operation } from '../contracts/operation.ts';
import { validate } from '../../lib/validate.ts';
import { admit, type AdmitDeps, type Caller } from './admit.ts';

/** An operation bound to its service: raw input and a caller in, the service's answer out. */
export type Bound<O> = (raw: unknown, caller: Caller) => Promise<O>;

export function binder(deps: AdmitDeps) {
  return <I extends z.ZodType, O>(op: Operation<I>, run: (input: z.output<I>, principal: Principal | null, caller: Caller) => O | Promise<O>): Bound<O> =>
    async (raw, caller) => {
      const principal = admit(deps, op.access, caller);
      return run(validate(op.input, raw), principal, caller);
    };
}

/** Checks only who may call (before an upload is read). */
export function admitter(deps: AdmitDeps) {
  return (op: Operation, caller: Caller): Principal | null => admit(deps, op.access, caller);
}
