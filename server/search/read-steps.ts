import type { Awaitable } from '../store/version-reads.ts';

/**
 * A stage of the pipeline written once for both backends (server/store/version-reads.ts): a
 * generator that hands each read it waits for to its driver. Its code reads `yield* wait(read)`.
 * With SQLite's reads nothing is ever waited for: runSync runs the whole stage in one synchronous
 * call, so it stays inside the caller's read transaction, which cannot span an await. With
 * PostgreSQL's, runAsync awaits each read.
 */
export type Step<T> = Generator<PromiseLike<unknown>, T, unknown>;

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** A read's value: at once when it has one, else after the driver awaited it. */
export function* wait<T>(v: Awaitable<T>): Step<T> {
  return isThenable(v) ? ((yield v) as T) : v;
}

/**
 * Runs a stage whose reads answer at once, in this call. A read that returns a promise is a bug (a
 * SQLite transaction around the stage would end before it settles): it throws rather than wait.
 */
export function runSync<T>(step: Step<T>): T {
  const r = step.next();
  if (r.done) return r.value;
  // Keep the stray promise from ending the process as an unhandled rejection.
  Promise.resolve(r.value).then(undefined, () => undefined);
  step.return(undefined as T);
  throw new Error('a read of a synchronous stage returned a promise: it cannot run inside a SQLite read transaction');
}

/** Runs a stage whose reads may be promises, awaiting each one; a read's failure is thrown into the stage. */
export async function runAsync<T>(step: Step<T>): Promise<T> {
  let r = step.next();
  while (!r.done) {
    let value: unknown;
    try {
      value = await r.value;
    } catch (err) {
      r = step.throw(err);
      continue;
    }
    r = step.next(value);
  }
  return r.value;
}
