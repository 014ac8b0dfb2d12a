// Worker thread: reads the served version of one library as fast as it can over its own SQLite
// connection, while another thread imports, and reports every distinct state it saw.
import { parentPort, workerData } from 'node:worker_threads';
import { Store } from '../../server/store/index.ts';

const { dataDir, libraryId, stopFlag } = workerData as { dataDir: string; libraryId: string; stopFlag: SharedArrayBuffer };
const flag = new Int32Array(stopFlag);
const store = Store.open(dataDir);
const seen = new Map<string, number>();
let samples = 0;
// One read transaction = one snapshot: what a search request would see. Opened by hand because the
// snippet reads are async; nothing else uses this worker's connection between them.
async function sample(): Promise<string> {
  store.db.exec('BEGIN');
  try {
    const v = store.libraries.currentVersion(libraryId, '');
    if (!v) return 'none';
    const kinds = await store.snippets.countByKind(v.id);
    const first = (await store.snippets.list(v.id, 1))[0];
    return `${v.totalSnippets}|${kinds.code + kinds.info}|${first?.title.split(' ')[0] ?? ''}`;
  } finally {
    store.db.exec('COMMIT');
  }
}
parentPort!.postMessage({ ready: true });
// Every 5 ms (woken at once by the stop), not back to back: a half-built or half-swapped version would
// stay visible for as long as its import runs, and each sample counts the version's rows, so reading
// without a pause cost a core's worth of CPU for the whole import (~1,800 samples), taken from the
// import it watches and from the rest of the suite.
while (Atomics.load(flag, 0) === 0) {
  const key = await sample();
  seen.set(key, (seen.get(key) ?? 0) + 1);
  samples++;
  Atomics.wait(flag, 0, 0, 5);
}
store.close();
parentPort!.postMessage({ samples, seen: Object.fromEntries(seen) });
