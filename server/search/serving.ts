import type { Store } from '../store/index.ts';
import type { PgStore } from '../store/pg/index.ts';
import { pgSearchReads } from '../store/pg/version-reads.ts';
import { sqliteSearchReads, type SearchReads } from '../store/version-reads.ts';
import type { Step } from './read-steps.ts';

/** The store the search services answer from: SQLite's (the default) or PostgreSQL's, told apart by `backend`. */
export type ServingStore = Store | PgStore;

/** The search side's reads of a store, whichever backend holds it (the long-lived ones: the catalogue's). */
export function searchReadsOf(store: ServingStore): SearchReads {
  return store.backend === 'sqlite' ? sqliteSearchReads(store) : pgSearchReads(store);
}

/** The store of a search that has no request reads: SQLite's (a search on PostgreSQL always has them). */
export function sqliteOnly(store: ServingStore): Store {
  if (store.backend !== 'sqlite') throw new Error('a search on PostgreSQL lost its request reads');
  return store;
}

/** Whether a callback gave a step to run (rather than a promise). */
export function isStep<T>(v: Step<T> | Promise<T>): v is Step<T> {
  return typeof (v as Step<T>).next === 'function' && typeof (v as Step<T>)[Symbol.iterator] === 'function';
}

/**
 * Promise.allSettled of `fn` over the items, run one after the other: on PostgreSQL they share the
 * snapshot's one connection, which runs one statement at a time, so side by side gains nothing (and
 * pg deprecates queries queued on a busy client).
 */
export async function settledInTurn<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const out: PromiseSettledResult<R>[] = [];
  for (const item of items) {
    try {
      out.push({ status: 'fulfilled', value: await fn(item) });
    } catch (reason) {
      out.push({ status: 'rejected', reason });
    }
  }
  return out;
}
