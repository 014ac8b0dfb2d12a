import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RepoAddress } from './address.ts';
import { cloneRepo, updateRepo, type CloneOptions } from './remote.ts';
import { dirBytes } from './run.ts';

/**
 * Where a build reads the repository from. A library's current documentation keeps its checkout
 * between builds (`<dataDir>/git/cache/<hash of the library ID>`), so a refresh fetches only the
 * new commit's changed objects instead of cloning again; a tag, a checkout in use by another job
 * (a lock folder), or a kept checkout of other settings or over half the size limit gets a fresh
 * clone in the job's folder. A kept checkout that fails to update is dropped (the next build
 * clones). Old objects stay in a kept checkout until that size check drops it.
 */
export interface Checkout {
  dir: string;
  commit: string;
  /** The branch checked out (from the first clone of a kept checkout), null when unknown. */
  branch: string | null;
  /** True when a kept checkout was updated instead of a fresh clone. */
  updated: boolean;
  /** Releases a kept checkout's lock (call when the build is done with the files). */
  release(): void;
}

interface CacheMeta {
  libraryId: string;
  url: string;
  ref: string | null;
  folders: string[];
  branch: string | null;
}

export interface CheckoutRequest {
  addr: RepoAddress;
  libraryId: string;
  /** null: no kept checkout (a tag build). */
  cacheRoot: string | null;
  /** Whether a kept checkout may be updated (the library is indexed from this repository); else it is cloned afresh and kept. */
  reuse: boolean;
  /** The job's own folder (fresh clones go there and are removed with it). */
  jobDir: string;
  jobId: number;
  clone: Omit<CloneOptions, 'dir'>;
}

export async function checkoutRepo(r: CheckoutRequest): Promise<Checkout> {
  const fresh = async (): Promise<Checkout> => {
    const dir = path.join(r.jobDir, 'repo');
    const c = await cloneRepo(r.addr, { ...r.clone, dir });
    return { dir, ...c, updated: false, release: () => {} };
  };
  if (!r.cacheRoot) return fresh();
  fs.mkdirSync(r.cacheRoot, { recursive: true, mode: 0o700 });
  const key = createHash('sha1').update(r.libraryId).digest('hex').slice(0, 20);
  const dir = path.join(r.cacheRoot, key);
  const lock = `${dir}.lock`;
  try {
    // mkdir is atomic: of two jobs of the same library, one keeps the checkout, the other clones afresh.
    fs.mkdirSync(lock);
  } catch {
    return fresh();
  }
  fs.writeFileSync(path.join(lock, 'job'), String(r.jobId));
  const release = () => fs.rmSync(lock, { recursive: true, force: true });
  try {
    const want: CacheMeta = { libraryId: r.libraryId, url: r.addr.url, ref: r.clone.ref, folders: r.clone.folders, branch: null };
    const metaFile = `${dir}.json`;
    const kept = readMeta(metaFile);
    const usable =
      r.reuse &&
      kept &&
      fs.existsSync(dir) &&
      kept.url === want.url &&
      kept.ref === want.ref &&
      kept.folders.join('\n') === want.folders.join('\n') &&
      dirBytes(dir, r.clone.maxBytes / 2) <= r.clone.maxBytes / 2;
    if (usable) {
      try {
        const { commit } = await updateRepo(r.addr, { ...r.clone, dir });
        return { dir, commit, branch: kept.branch, updated: true, release };
      } catch (err) {
        drop(dir, metaFile);
        throw err;
      }
    }
    drop(dir, metaFile);
    try {
      const c = await cloneRepo(r.addr, { ...r.clone, dir });
      fs.writeFileSync(metaFile, JSON.stringify({ ...want, branch: c.branch }));
      return { dir, ...c, updated: false, release };
    } catch (err) {
      drop(dir, metaFile);
      throw err;
    }
  } catch (err) {
    release();
    throw err;
  }
}

function lockJob(lock: string): number {
  try {
    return Number(fs.readFileSync(path.join(lock, 'job'), 'utf8'));
  } catch {
    return 0;
  }
}

function readMeta(file: string): CacheMeta | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as CacheMeta;
  } catch {
    return null;
  }
}

function drop(dir: string, metaFile: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(metaFile, { force: true });
}

/**
 * Removes what jobs that are not running left in the cache root (lock folders), and kept
 * checkouts of libraries no longer indexed from Git. Returns how many entries went.
 */
export async function sweepCache(
  cacheRoot: string,
  running: (jobId: number) => Promise<boolean>,
  isGitLibrary: (libraryId: string) => Promise<boolean>,
): Promise<number> {
  if (!fs.existsSync(cacheRoot)) return 0;
  let removed = 0;
  for (const name of fs.readdirSync(cacheRoot)) {
    const full = path.join(cacheRoot, name);
    if (name.endsWith('.lock')) {
      if (await running(lockJob(full))) continue;
      fs.rmSync(full, { recursive: true, force: true });
      removed++;
    } else if (name.endsWith('.json')) {
      // Gone already (dropped with its checkout above), or still beside its checkout.
      if (!fs.existsSync(full) || fs.existsSync(full.slice(0, -'.json'.length))) continue;
      fs.rmSync(full, { force: true });
      removed++;
    } else {
      const meta = readMeta(`${full}.json`);
      // A checkout being cloned for a first parse has no Git library yet: its running job's lock keeps it.
      if ((meta && (await isGitLibrary(meta.libraryId))) || (fs.existsSync(`${full}.lock`) && (await running(lockJob(`${full}.lock`))))) continue;
      drop(full, `${full}.json`);
      removed++;
    }
  }
  return removed;
}
