import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Jobs' staged inputs (a bundle's staged libraries, a source's input and uploaded documents) as
 * every node that may run the job sees them. A staged file is named by its path relative to the data
 * dir ("uploads/staged/x.ndjson"), so that the same name points into each node's own data dir.
 *
 * On SQLite there is one node: the file on its disk is the input (LocalStagedFiles, nothing copied).
 * On PostgreSQL any node may claim the job, and must when the node that took the upload died, so the
 * file is also stored in the database before the job is queued, fetched by a node that lacks it, and
 * removed when the job ends or the upload is swept (SharedStagedFiles).
 */
export interface StagedFiles {
  /** Copies these staged files (on this node's disk) where every node can read them; before their job is queued. */
  share(names: string[]): Promise<void>;
  /** The file's path on this node, fetched first when only the shared copy has it; null when neither does. */
  obtain(name: string): Promise<string | null>;
  /** Drops the shared copies of these names and of the files under them (a name may be a folder). This node's files are the caller's. */
  forget(names: string[]): Promise<void>;
  /** Drops the shared copies under `prefix` older than `maxAgeMs` that `keep` does not hold on to (a queued or running job's); how many. */
  sweep(prefix: string, keep: (name: string) => boolean, maxAgeMs: number, now?: number): Promise<number>;
  /** Fetches every shared file this node lacks (a backup's archive holds every pending job's input); how many. */
  gather(): Promise<number>;
}

/** A name as the data dir holds it: relative, POSIX separators, never climbing out of it. */
export function stagedName(dataDir: string, file: string): string {
  const name = path.relative(dataDir, path.resolve(dataDir, file)).split(path.sep).join('/');
  if (name === '' || name.startsWith('../') || name === '..' || path.isAbsolute(name)) throw new Error(`${file} is not inside the data dir`);
  return name;
}

/** SQLite's: the file on this node's disk is all there is. */
export class LocalStagedFiles implements StagedFiles {
  constructor(private readonly dataDir: string) {}

  async share(): Promise<void> {}

  async obtain(name: string): Promise<string | null> {
    const file = path.resolve(this.dataDir, name);
    return fs.promises.access(file).then(
      () => file,
      () => null,
    );
  }

  async forget(): Promise<void> {}

  async sweep(): Promise<number> {
    return 0;
  }

  async gather(): Promise<number> {
    return 0;
  }
}

/** What SharedStagedFiles needs of the database: PgStagedFileStore (server/store/pg/staged-files.ts). */
export interface StagedFileStore {
  write(name: string, chunks: AsyncIterable<Buffer>, now: string): Promise<{ size: number; chunks: number }>;
  read(name: string): Promise<AsyncIterable<Buffer> | null>;
  get(name: string): Promise<unknown>;
  remove(names: string[]): Promise<number>;
  listOlder(prefix: string, before: string): Promise<{ name: string }[]>;
  names(): Promise<string[]>;
}

/** Bytes per stored chunk: large enough for few rows, small enough to hold one at a time. */
const CHUNK_BYTES = 1 << 20;

/** PostgreSQL's: each staged file also in the database, so that whichever node runs the job finds it. */
export class SharedStagedFiles implements StagedFiles {
  constructor(
    private readonly dataDir: string,
    private readonly store: StagedFileStore,
    private readonly chunkBytes = CHUNK_BYTES,
  ) {}

  async share(names: string[]): Promise<void> {
    for (const name of names) {
      const n = stagedName(this.dataDir, name);
      const input = fs.createReadStream(path.join(this.dataDir, n), { highWaterMark: this.chunkBytes });
      try {
        await this.store.write(n, input as AsyncIterable<Buffer>, new Date().toISOString());
      } finally {
        input.destroy();
      }
    }
  }

  async obtain(name: string): Promise<string | null> {
    const n = stagedName(this.dataDir, name);
    const file = path.join(this.dataDir, n);
    // The node that staged it still has it (staged files never change, so a copy here is the same).
    if (fs.existsSync(file)) return file;
    const chunks = await this.store.read(n);
    if (!chunks) return null;
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    // Written beside and renamed: a node killed while fetching leaves a .part the sweep removes, never a short input.
    const part = `${file}.${crypto.randomBytes(4).toString('hex')}.part`;
    try {
      await pipeline(Readable.from(chunks), fs.createWriteStream(part, { flags: 'wx' }));
      await fs.promises.rename(part, file);
    } catch (err) {
      await fs.promises.rm(part, { force: true });
      throw err;
    }
    return file;
  }

  async forget(names: string[]): Promise<void> {
    // A name outside the data dir is an absolute path of a job queued before inputs were shared: never stored.
    const inside = names.flatMap((n) => {
      try {
        return [stagedName(this.dataDir, n)];
      } catch {
        return [];
      }
    });
    await this.store.remove(inside);
  }

  async sweep(prefix: string, keep: (name: string) => boolean, maxAgeMs: number, now = Date.now()): Promise<number> {
    const old = await this.store.listOlder(prefix, new Date(now - maxAgeMs).toISOString());
    const gone = old.map((r) => r.name).filter((n) => !keep(n));
    return gone.length ? this.store.remove(gone) : 0;
  }

  async gather(): Promise<number> {
    let fetched = 0;
    for (const name of await this.store.names()) {
      if (fs.existsSync(path.join(this.dataDir, name))) continue;
      try {
        // Null when its job ended meanwhile: then no archive needs it.
        if ((await this.obtain(name)) !== null) fetched++;
      } catch (err) {
        // Removed while it was read: its job ended, likewise.
        if ((await this.store.get(name)) !== null) throw err;
      }
    }
    return fetched;
  }
}
