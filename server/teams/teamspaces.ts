import type { Stores } from '../store/stores.ts';
import { newKeySecret, type CreatedKey } from '../auth/keys.ts';
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
    private readonly store: Stores,
    private readonly teams: Stores['teams'],
    private readonly members: MemberService,
    private readonly now: () => string,
  ) {}

  async list(): Promise<TeamspaceView[]> {
    return (await this.teams.teamspaces()).map((t, i) => ({
      id: t.id,
      name: t.name,
      plan: t.plan,
      members: t.people,
      isDefault: i === 0,
      createdAt: t.created_at,
    }));
  }

  async byName(name: string): Promise<TeamspaceView> {
    const t = (await this.list()).find((x) => x.name === name);
    if (!t) throw new ApiError('not_found', `No teamspace named "${name}".`);
    return t;
  }

  /**
   * Creates a teamspace with its first owner and that owner's API key (returned once). All or
   * nothing: a refused owner (name, license seats) leaves no empty teamspace behind.
   */
  async create(input: {
    name: string;
    plan?: string;
    owner: string;
    email?: string | null;
  }): Promise<{ teamspace: TeamspaceView; owner: MemberView; key: CreatedKey }> {
    const name = input.name.trim();
    if (!TEAMSPACE_NAME.test(name)) throw new ApiError('validation_error', 'name: 1-64 lower-case letters, digits, . _ or -, starting with a letter or digit.');
    const plan = (input.plan ?? 'enterprise') as Plan;
    if (!PLANS.includes(plan)) throw new ApiError('validation_error', `plan: one of ${PLANS.join(', ')}.`);
    const ownerName = this.members.checkedName(input.owner);
    const secret = newKeySecret(`${ownerName} key`, 'all');
    // One store transaction: the name's check, the teamspace, its owner (seats) and the owner's key.
    const created = await this.store.membership.createTeamspace(
      name,
      plan,
      { name: ownerName, role: 'owner', email: input.email ?? null, maxSeats: this.members.maxMembers(), now: this.now() },
      secret.stored,
    );
    const owner = await this.members.get(created.teamspaceId, created.memberId);
    const key: CreatedKey = {
      id: created.keyId,
      key: secret.key,
      name: secret.stored.name,
      memberId: owner.id,
      memberName: owner.name,
      role: 'owner',
      scope: 'all',
    };
    return { teamspace: await this.byName(name), owner, key };
  }
}
