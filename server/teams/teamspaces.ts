import type { Store } from '../store/index.ts';
import type { TeamStore } from '../store/teams.ts';
import type { CreatedKey } from '../auth/keys.ts';
import { ApiError } from '../../lib/errors.ts';
import type { Plan } from './plans.ts';
import { PLANS } from '../contracts/teams.ts';
import type { MemberService, MemberView } from './members.ts';

export interface TeamspaceView {
  id: number;
  name: string;
  plan: Plan;
  /** Active members (the anonymous member excluded). */
  members: number;
  /** The first teamspace: anonymous callers and the CLI act in it unless told otherwise. */
  isDefault: boolean;
  createdAt: string;
}

/** Lower-case, as it is typed after --teamspace; unique. */
const TEAMSPACE_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * The teamspaces of an installation. The first one (`default`) exists from the start; the operator
 * creates more on the box (`stacks teamspaces create`), each with its first owner, who then
 * manages members, keys, policy and rules of that teamspace over the API like any owner.
 */
export class TeamspaceService {
  constructor(
    private readonly store: Store,
    private readonly teams: TeamStore,
    private readonly members: MemberService,
    private readonly now: () => string,
  ) {}

  list(): TeamspaceView[] {
    return this.teams.teamspaces().map((t, i) => ({ id: t.id, name: t.name, plan: t.plan, members: t.people, isDefault: i === 0, createdAt: t.created_at }));
  }

  byName(name: string): TeamspaceView {
    const t = this.list().find((x) => x.name === name);
    if (!t) throw new ApiError('not_found', `No teamspace named "${name}".`);
    return t;
  }

  /**
   * Creates a teamspace with its first owner and that owner's API key (returned once). All or
   * nothing: a refused owner (name, license seats) leaves no empty teamspace behind.
   */
  create(input: { name: string; plan?: string; owner: string; email?: string | null }): { teamspace: TeamspaceView; owner: MemberView; key: CreatedKey } {
    const name = input.name.trim();
    if (!TEAMSPACE_NAME.test(name)) throw new ApiError('validation_error', 'name: 1-64 lower-case letters, digits, . _ or -, starting with a letter or digit.');
    const plan = (input.plan ?? 'enterprise') as Plan;
    if (!PLANS.includes(plan)) throw new ApiError('validation_error', `plan: one of ${PLANS.join(', ')}.`);
    return this.store.db.transaction(() => {
      if (this.store.accounts.teamspaceByName(name)) throw new ApiError('conflict', `A teamspace named "${name}" already exists.`);
      const id = this.store.accounts.createTeamspace(name, plan, this.now());
      const { member, key } = this.members.add(id, 'operator', { name: input.owner, email: input.email ?? null, role: 'owner' });
      return { teamspace: this.byName(name), owner: member, key: key! };
    })();
  }
}
