// The seam of the per-version retrieval stage (server/search/read-steps.ts, server/store/version-reads.ts):
// on SQLite the stage can never wait inside a read transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { versionCandidates, versionCandidatesAsync } from '../server/search/pipeline.ts';
import { prepareQuery } from '../server/search/query.ts';
import { runAsync, runSync, wait, type Step } from '../server/search/read-steps.ts';
import { openDb } from '../server/store/db.ts';
import { Store } from '../server/store/index.ts';
import { sqliteVersionReads, type VersionReads } from '../server/store/version-reads.ts';

function* twice(read: () => number | Promise<number>): Step<number> {
  const a = yield* wait(read());
  const b = yield* wait(read());
  return a + b;
}

test('a stage runs in one call when its reads answer at once, refuses a read that returns a promise, and awaits them when run asynchronously', async () => {
  assert.equal(runSync(twice(() => 2)), 4);
  assert.throws(() => runSync(twice(() => Promise.resolve(2))), /cannot run inside a SQLite read transaction/);
  // A rejected stray read does not become an unhandled rejection.
  assert.throws(() => runSync(twice(() => Promise.reject(new Error('late')))), /returned a promise/);
  assert.equal(await runAsync(twice(() => Promise.resolve(3))), 6);
  assert.equal(await runAsync(twice(() => 1)), 2);
  // A failed read is thrown into the stage, which may handle it.
  function* guarded(): Step<string> {
    try {
      return String(yield* wait(Promise.reject(new Error('down'))));
    } catch (err) {
      return `caught ${(err as Error).message}`;
    }
  }
  assert.equal(await runAsync(guarded()), 'caught down');
});

test('SQLite: a read snapshot refuses an async function; the stage over reads that may be asynchronous runs through the async driver', async () => {
  const store = new Store(openDb(':memory:'));
  assert.throws(() => store.search.snapshot(async () => 1), /cannot return a promise/);
  // Inside a transaction already open, the snapshot joins it, and still refuses.
  assert.throws(() => store.search.snapshot(() => store.search.snapshot(async () => 1)), /cannot span an await/);
  const q = await prepareQuery('register a plugin', null);
  const target = { versionId: 1, libraryId: '/a/b' };
  assert.deepEqual(versionCandidates(store, q, target, {}), []);
  // The SQLite reads answer at once; made asynchronous, the same stage runs only through the async driver.
  const sync = sqliteVersionReads(store);
  const later: VersionReads = { ...sync, versionKey: async () => ({ key: 'k', ready: true }) };
  assert.deepEqual(await versionCandidatesAsync(later, q, target, {}), []);
  store.close();
});
