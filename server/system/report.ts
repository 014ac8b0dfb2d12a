import fs from 'node:fs';
import path from 'node:path';
import type { Store } from '../store/index.ts';
import { VERSION } from '../version.ts';

export interface SystemReport {
  version: string;
  uptimeSeconds: number;
  database: { bytes: number; walBytes: number; usageBytes: number };
  libraries: number;
  versions: number;
  snippets: number;
  queue: Record<string, number>;
  embedder: { id: string; dims: number } | null;
}

const size = (file: string) => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};

/** What an administrator checks first: how big the data is, what is indexed, what waits in the queue. */
export function systemReport(s: { store: Store; dataDir: string; embedder: { id: string; dims: number } | null; startedAt: Date }): SystemReport {
  const versions = s.store.libraries.allCurrentVersions().filter((v) => v.state === 'ready');
  return {
    version: VERSION,
    uptimeSeconds: Math.round((Date.now() - s.startedAt.getTime()) / 1000),
    database: {
      bytes: size(path.join(s.dataDir, 'stacks.db')),
      walBytes: size(path.join(s.dataDir, 'stacks.db-wal')),
      usageBytes: size(path.join(s.dataDir, 'usage.db')),
    },
    libraries: s.store.libraries.list().length,
    versions: versions.length,
    snippets: versions.reduce((n, v) => n + v.totalSnippets, 0),
    queue: s.store.jobs.counts(),
    embedder: s.embedder ? { id: s.embedder.id, dims: s.embedder.dims } : null,
  };
}
