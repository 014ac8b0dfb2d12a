import type { TeamspaceRow } from '../accounts.ts';
import type { RuleRow, TeamPolicyReads } from '../teams.ts';
import type { PgPool } from './pool.ts';
import { PgTeamStore } from './teams.ts';
import { pgQuery, withSnapshot } from './transaction.ts';

/**
 * TeamPolicyReads on PostgreSQL: what the search path reads of teamspaces on every candidate
 * library, synchronously, through TeamCache. PostgreSQL cannot answer synchronously, so each node
 * holds the teamspaces' rows and the rules (small tables) in memory and reads them again whenever
 * their content hash (PgTeamStore.dataVersion) changed: checked every `refreshMs` in the background,
 * and at once by reload() after a write through this node (TeamCache.invalidate awaits it). Another
 * node's change is so seen within `refreshMs` plus a read.
 */
export class PgTeamPolicyReads implements Pick<TeamPolicyReads, 'dataVersion' | 'teamspace' | 'rulesFor'> {
  private teamspaces = new Map<number, TeamspaceRow>();
  private rules: RuleRow[] = [];
  private version = -1;
  private timer: NodeJS.Timeout | null = null;
  private loading: Promise<void> | null = null;
  private readonly teams: PgTeamStore;

  private constructor(
    private readonly pool: PgPool,
    private readonly onError: (err: unknown) => void,
  ) {
    this.teams = new PgTeamStore(pool);
  }

  /** Loaded once before it answers, then kept up to date every `refreshMs` until close(). */
  static async open(pool: PgPool, refreshMs = 1000, onError: (err: unknown) => void = () => undefined): Promise<PgTeamPolicyReads> {
    const reads = new PgTeamPolicyReads(pool, onError);
    await reads.reload();
    reads.timer = setInterval(() => void reads.reload().catch(reads.onError), refreshMs);
    reads.timer.unref();
    return reads;
  }

  /** Reads the rows again when they changed; one read at a time (a call during one waits for a fresh one). */
  async reload(): Promise<void> {
    while (this.loading) await this.loading.catch(() => undefined);
    this.loading = this.read();
    try {
      await this.loading;
    } finally {
      this.loading = null;
    }
  }

  private async read(): Promise<void> {
    // The hash and the rows from one snapshot, so the version held always names the rows held.
    await withSnapshot(this.pool, async () => {
      const version = await this.teams.dataVersion();
      if (version === this.version) return;
      const teamspaces = (await pgQuery<TeamspaceRow>(this.pool, 'SELECT * FROM teamspaces')).rows;
      const rules = (await pgQuery<RuleRow>(this.pool, 'SELECT * FROM rules ORDER BY id')).rows;
      this.teamspaces = new Map(teamspaces.map((t) => [t.id, t]));
      this.rules = rules;
      this.version = version;
    });
  }

  dataVersion(): number {
    return this.version;
  }

  teamspace(id: number): TeamspaceRow | null {
    return this.teamspaces.get(id) ?? null;
  }

  /** SQLite's rulesFor: the teamspace's rules and every library-owner rule, by id. */
  rulesFor(teamspaceId: number): RuleRow[] {
    return this.rules.filter((r) => r.teamspace_id === teamspaceId || r.kind === 'library_own');
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
