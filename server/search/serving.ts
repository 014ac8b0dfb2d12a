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
