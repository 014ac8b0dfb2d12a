import type { LicenseService } from '../license/license.ts';
import { VERSION } from '../version.ts';
import { describeEmbedder } from '../embed/index.ts';
import type { Embedder } from '../embed/types.ts';
import type { Backend, PoolStats } from '../store/stores.ts';
import type { LeaseStats } from '../jobs/queue.ts';

export interface HealthDeps {
  license: Pick<LicenseService, 'status'>;
  /** The database: which backend, its pool (PostgreSQL), whether it answers, and the job counts by state. */
  store: {
    readonly backend: Backend;
    poolStats(): PoolStats | null;
    ping(): Promise<boolean>;
    jobs: { counts(): Promise<Record<string, number>> };
    vectors: { versionCounts(): Promise<{ embedded: number; pending: number }> };
  };
  /** This node's job queue: the leases it holds, lost and recovered. */
  jobs: { leases(): LeaseStats };
  embedder: Embedder | null;
  startedAt: Date;
}

/**
 * GET /api/health: the license, the database, the queue and the embedder, for monitoring (no key).
 * The database's pool and the queue's leases are this node's (in a cluster, ask each node); the
 * job counts are the whole queue's, the same from every node.
 */
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
    database: { status: dbOk ? 'ok' : 'unavailable', backend: s.store.backend, pool: s.store.poolStats() },
    // leases: kept in this process's memory, so known even when the database is not
    queue: { ...(queue ? { status: 'ok', jobs: queue } : { status: 'unavailable', jobs: null }), leases: s.jobs.leases() },
    // versions: served library versions whose vectors are complete, and those the embed job has not finished (they answer lexically).
    embedder: s.embedder ? { ...describeEmbedder(s.embedder), versions } : null,
  };
}

export type HealthReport = Awaited<ReturnType<typeof healthReport>>;
