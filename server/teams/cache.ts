import type { TeamspaceRow } from '../store/accounts.ts';
import type { RuleRow, TeamPolicyReads } from '../store/teams.ts';
import { compilePolicy, type CompiledPolicy } from './policy-filter.ts';
import { parseStoredPolicy } from './policy-defaults.ts';
import { parseLibraryId } from '../../lib/model.ts';

export interface TeamRules {
  global: string[];
  own: Map<string, string[]>;
  team: Map<string, string[]>;
}

interface Entry {
  row: TeamspaceRow;
  compiled: CompiledPolicy;
  rules?: TeamRules;
}

/**
 * Where the cache reads teamspaces and rules, synchronously: SQLite's TeamPolicyReads, or a
 * node's in-memory copy of PostgreSQL's rows (server/store/pg/team-policy.ts), which `reload`
 * brings up to date after a write through this process.
 */
export type PolicySource = Pick<TeamPolicyReads, 'dataVersion' | 'teamspace' | 'rulesFor'> & { reload?(): Promise<void> };

/**
 * Per-teamspace policy and rules held in memory, because the search path asks for them once per
 * candidate library. Writes through this process call invalidate(); writes by another process
 * (the CLI) are noticed through SQLite's data_version, checked at most every `recheckMs`.
 */
export class TeamCache {
  private entries = new Map<number, Entry>();
  private checkedAt = 0;
  private version = -1;
  private hits = 0;
  private misses = 0;

  /** Teamspaces held, and lookups served from memory or read from the database since start (for /metrics). */
  stats(): { entries: number; hits: number; misses: number } {
    return { entries: this.entries.size, hits: this.hits, misses: this.misses };
  }

  constructor(
    private readonly store: PolicySource,
    private readonly recheckMs = 100,
  ) {}

  /** After a write through this process: what is held is dropped, and a source held in memory (PostgreSQL's) is read again first. */
  async invalidate(): Promise<void> {
    await this.store.reload?.();
    this.entries.clear();
    this.checkedAt = 0;
  }

  private refresh(): void {
    const now = Date.now();
    if (now - this.checkedAt < this.recheckMs) return;
    this.checkedAt = now;
    const v = this.store.dataVersion();
    if (v !== this.version) {
      this.version = v;
      this.entries.clear();
    }
  }

  private entry(teamspaceId: number): Entry | null {
    this.refresh();
    let e = this.entries.get(teamspaceId);
    if (e) this.hits++;
    else {
      this.misses++;
      const row = this.store.teamspace(teamspaceId);
      if (!row) return null;
      e = { row, compiled: compilePolicy(parseStoredPolicy(row.policy_json)) };
      this.entries.set(teamspaceId, e);
    }
    return e;
  }

  compiled(teamspaceId: number): CompiledPolicy {
    const e = this.entry(teamspaceId);
    if (!e) throw new Error(`teamspace ${teamspaceId} does not exist`);
    return e.compiled;
  }

  rules(teamspaceId: number): TeamRules {
    const e = this.entry(teamspaceId);
    if (!e) return { global: [], own: new Map(), team: new Map() };
    if (!e.rules) e.rules = groupRules(this.store.rulesFor(teamspaceId), teamspaceId);
    return e.rules;
  }
}

function groupRules(rows: RuleRow[], teamspaceId: number): TeamRules {
  const r: TeamRules = { global: [], own: new Map(), team: new Map() };
  const push = (m: Map<string, string[]>, id: string, text: string) => {
    const list = m.get(id);
    if (list) list.push(text);
    else m.set(id, [text]);
  };
  for (const row of rows) {
    if (row.kind === 'global' && row.teamspace_id === teamspaceId) r.global.push(row.text);
    else if (row.kind === 'library_own' && row.library_id) push(r.own, libraryKey(row.library_id), row.text);
    else if (row.kind === 'library_team' && row.teamspace_id === teamspaceId && row.library_id) push(r.team, libraryKey(row.library_id), row.text);
  }
  return r;
}

/** Rules attach to a library, not to one of its versions: `/o/r@1.2` and `/o/r` share them. */
export function libraryKey(id: string): string {
  return (parseLibraryId(id)?.id ?? id).toLowerCase();
}
