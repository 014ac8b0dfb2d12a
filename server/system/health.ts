import type { LicenseService } from '../license/license.ts';
import { VERSION } from '../version.ts';
import { describeEmbedder } from '../embed/index.ts';
import type { Embedder } from '../embed/types.ts';

export interface HealthDeps {
  license: Pick<LicenseService, 'status'>;
  /** The database: whether it answers, and the job counts by state. */
  store: {
    ping(): Promise<boolean>;
    jobs: { counts(): Promise<Record<string, number>> };
    vectors: { versionCounts(): Promise<{ embedded: number; pending: number }> };
  };
  embedder: Embedder | null;
  startedAt: Date;
}

/** GET /api/health: the license, the database, the queue and the embedder, for monitoring (no key). */
export async function healthReport(s: HealthDeps) {
  const lic = s.license.status();
  const dbOk = await s.store.ping();
  let queue: Record<string, number> | null = null;
  let versions: { embedded: number; pending: number } | null = null;
  if (dbOk) {
    try {
      queue = await s.store.jobs.counts();
      versions = s.embedder ? await s.store.vectors.versionCounts() : null;
    } catch {
      queue = null;
    }
  }
  return {
    status: dbOk ? 'ok' : 'degraded',
    version: VERSION,
    uptimeSeconds: Math.round((Date.now() - s.startedAt.getTime()) / 1000),
    startedAt: s.startedAt.toISOString(),
    license: {
      state: lic.state,
      message: lic.message,
      expiresAt: lic.license?.expiresAt ?? null,
      edition: lic.license?.edition ?? null,
      licensee: lic.license?.licensee ?? null,
    },
    database: { status: dbOk ? 'ok' : 'unavailable' },
    queue: queue ? { status: 'ok', jobs: queue } : { status: 'unavailable', jobs: null },
    // versions: served library versions whose vectors are complete, and those the embed job has not finished (they answer lexically).
    embedder: s.embedder ? { ...describeEmbedder(s.embedder), versions } : null,
  };
}

export type HealthReport = Awaited<ReturnType<typeof healthReport>>;
