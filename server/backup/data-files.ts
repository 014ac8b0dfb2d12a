import fs from 'node:fs';
import path from 'node:path';
import { SharedStagedFiles, type StagedFileStore } from '../ingest/staged-files.ts';

/**
 * The data dir's own files a backup carries besides the databases: the license, the declared
 * sources, the console's cookie secret, and the staged inputs (uploaded bundles, documents and
 * specifications) of jobs that have not run yet. Caches (the embedding table) and earlier backups are left out.
 */
export const DATA_FILES = ['license.json', 'sources.yaml', 'session.secret'];
export const DATA_TREES = ['uploads/staged', 'staging/sources'];
/** Database files as they sit in a data dir (with their WAL and shared-memory files). */
export const DATABASE_FILES = ['stacks.db', 'stacks.db-wal', 'stacks.db-shm', 'usage.db', 'usage.db-wal', 'usage.db-shm'];

/**
 * Links (or, across file systems, copies) the data files into `into`, skipping those already
 * there. A hard link keeps a staged input readable even when its job finishes and deletes it
 * while the backup is being written.
 */
export function linkDataFiles(dataDir: string, into: string): void {
  const files = [...DATA_FILES, ...DATA_TREES.flatMap((tree) => treeFiles(dataDir, tree))];
  for (const rel of files) {
    const from = path.join(dataDir, rel);
    const to = path.join(into, rel);
    if (fs.existsSync(to) || !fs.existsSync(from) || !fs.statSync(from).isFile()) continue;
    fs.mkdirSync(path.dirname(to), { recursive: true });
    try {
      fs.linkSync(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // deleted meanwhile
      fs.copyFileSync(from, to);
    }
  }
}

/** The staged inputs of jobs in a data dir (paths relative to it). */
export function stagedInputFiles(dataDir: string): string[] {
  return DATA_TREES.flatMap((tree) => treeFiles(dataDir, tree));
}

/**
 * A data dir's staged inputs stored in PostgreSQL as well (a restore into it, a copy to it): the
 * database's pending jobs may be claimed by any node, which reads an input it lacks from there
 * (StagedFiles). Inputs no job needs are swept within the hour. How many files.
 */
export async function storeStagedInputs(dataDir: string, store: StagedFileStore): Promise<number> {
  const files = stagedInputFiles(dataDir);
  await new SharedStagedFiles(dataDir, store).share(files);
  return files.length;
}

function treeFiles(dataDir: string, tree: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(dataDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) (e.isDirectory() ? walk : (p: string) => out.push(p))(path.join(rel, e.name));
  };
  walk(tree);
  return out;
}
