/**
 * The shape a PostgreSQL store must have to stand in for its SQLite store: every public method, with
 * the same parameters, answering a Promise of the same result. `class PgXStore implements SameShape<XStore>`
 * makes the compiler hold the two backends to one interface, whether the SQLite method is still
 * synchronous or already async.
 */
export type SameShape<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K];
};
