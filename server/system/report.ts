import fs from 'node:fs';
import path from 'node:path';
import type { Stores } from '../store/stores.ts';
import type { Library } from '../../lib/model.ts';
import { VERSION } from '../version.ts';

/** What every report has: this build, how long it runs, the embedder (all of it also in /api/health). */
interface ReportBase {
  version: string;
  uptimeSeconds: number;
  embedder: { id: string; dims: number } | null;
}

/** The whole instance's figures: for its owner (and the operator) only. */
export interface SystemReport extends ReportBase {
  scope: 'instance';
  database: { bytes: number; walBytes: number; usageBytes: number };
  libraries: number;
  versions: number;
  snippets: number;
  queue: Record<string, number>;
}

/**
 * One teamspace's figures, for its owners and admins: nothing they could not already read
 * elsewhere (the libraries they may read, the jobs GET /api/jobs lists them), and no instance
 * total (database size, every teamspace's libraries and jobs).
 */
export interface TeamspaceReport extends ReportBase {
  scope: 'teamspace';
  teamspace: string;
  /** Libraries the teamspace's members may read (visibility, grants, its policy). */
  libraries: number;
  /** Of those, the ones this teamspace owns. */
  ownedLibraries: number;
  /** Served versions of those libraries, and their snippets. */
  versions: number;
  snippets: number;
  /** Its jobs by state, with those of no teamspace (instance maintenance), as GET /api/jobs lists them. */
  queue: Record<string, number>;
}

interface ReportSources {
  store: Stores;
  embedder: { id: string; dims: number } | null;
  startedAt: Date;
}

const size = (file: string) => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};

const base = (s: ReportSources): ReportBase => ({
  version: VERSION,
  uptimeSeconds: Math.round((Date.now() - s.startedAt.getTime()) / 1000),
  embedder: s.embedder ? { id: s.embedder.id, dims: s.embedder.dims } : null,
});

const servedVersions = async (store: Stores) => (await store.libraries.allCurrentVersions()).filter((v) => v.state === 'ready');

/** What an administrator checks first: how big the data is, what is indexed, what waits in the queue. */
export async function systemReport(s: ReportSources & { dataDir: string }): Promise<SystemReport> {
  const versions = await servedVersions(s.store);
  const { version, uptimeSeconds, embedder } = base(s);
  return {
    scope: 'instance',
    version,
    uptimeSeconds,
    database: {
      bytes: size(path.join(s.dataDir, 'stacks.db')),
      walBytes: size(path.join(s.dataDir, 'stacks.db-wal')),
      usageBytes: size(path.join(s.dataDir, 'usage.db')),
    },
    libraries: (await s.store.libraries.list()).length,
    versions: versions.length,
    snippets: versions.reduce((n, v) => n + v.totalSnippets, 0),
    queue: await s.store.jobs.counts(),
    embedder,
  };
}

/**
 * The same figures seen from one teamspace: `canSee` is the access policy's answer for its members;
 * a library of no teamspace belongs to the default one (as everywhere, server/teams/library-access.ts).
 */
export async function teamspaceReport(
  s: ReportSources & { teamspace: { id: number; name: string }; defaultTeamspaceId: number; canSee: (library: Library) => boolean },
): Promise<TeamspaceReport> {
  const visible = (await s.store.libraries.list()).filter((lib) => s.canSee(lib));
  const ids = new Set(visible.map((lib) => lib.id));
  const versions = (await servedVersions(s.store)).filter((v) => ids.has(v.libraryId));
  return {
    scope: 'teamspace',
    teamspace: s.teamspace.name,
    ...base(s),
    libraries: visible.length,
    ownedLibraries: visible.filter((lib) => (lib.teamspaceId ?? s.defaultTeamspaceId) === s.teamspace.id).length,
    versions: versions.length,
    snippets: versions.reduce((n, v) => n + v.totalSnippets, 0),
    queue: await s.store.jobs.counts(s.teamspace.id),
  };
}
