import { Argument, type Command } from 'commander';
import { choiceOption, intArg, output, printJson, withDataDir, withServices, type CommonOpts, type Local } from '../context.ts';
import { ROLES } from './keys.ts';
import type { Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { PLANS } from '../../server/contracts/teams.ts';
import { POLICY_SOURCE_TYPES, type PolicySourceType } from '../../server/contracts/policy.ts';
import { LOCAL, localIn } from '../../server/operations/index.ts';

type Base = CommonOpts & { teamspace?: string };
/** Setup commands may create the database of a new installation (see withServices). */
const CREATE = { create: true };

/** The id of a member of the teamspace a command acts in, by name. */
async function memberId(s: Local, o: Base, name: string): Promise<number> {
  const { members } = await s.operations.membersList({}, localIn(o.teamspace));
  const m = members.find((x) => x.name === name);
  if (!m) throw new ApiError('not_found', `No member named "${name}" in this teamspace.`);
  return m.id;
}

function withTeam(cmd: Command): Command {
  return withDataDir(cmd).option('--teamspace <name>', 'teamspace to act on (default: the first one)');
}

const list = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const RULE_KINDS = ['global', 'libraryOwn', 'libraryTeam'] as const;
function bool(v: string, option: string): boolean {
  if (['true', 'yes', '1', 'on'].includes(v)) return true;
  if (['false', 'no', '0', 'off'].includes(v)) return false;
  throw new ApiError('validation_error', `${option}: expected true or false, not "${v}"`);
}
function int(v: string, option: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n)) throw new ApiError('validation_error', `${option}: expected a whole number >= 0, not "${v}"`);
  return n;
}
function sourceTypes(v: string, option: string): PolicySourceType[] {
  const types = list(v);
  for (const t of types)
    if (!POLICY_SOURCE_TYPES.includes(t as PolicySourceType))
      throw new ApiError('validation_error', `${option}: unknown source type "${t}"; one of ${POLICY_SOURCE_TYPES.join(', ')}`);
  return types as PolicySourceType[];
}
function jsonObject(v: string, option: string): Record<string, Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch (err) {
    throw new ApiError('validation_error', `${option}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ApiError('validation_error', `${option}: expected a JSON object`);
  return parsed as Record<string, Record<string, unknown>>;
}

interface PolicySetOpts extends Base {
  patch?: string;
  replace?: boolean;
  mode?: string;
  requireVerified?: string;
  minTrustScore?: string;
  maxAgeDays?: string;
  block?: string;
  except?: string;
  minStars?: string;
  licenses?: string;
  allow?: string;
  enable?: string;
  disable?: string;
}

/** Builds a policy patch from the flags (a --patch JSON object is the base). */
function policyPatch(o: PolicySetOpts): Record<string, unknown> {
  const patch = o.patch ? jsonObject(o.patch, '--patch') : {};
  const lf = (patch.libraryFilters ??= {}) as Record<string, unknown>;
  const quality = (lf.quality ??= {}) as Record<string, unknown>;
  const repo = (quality.repoFilters ??= {}) as Record<string, unknown>;
  if (o.mode) lf.mode = o.mode;
  if (o.requireVerified !== undefined) quality.requireVerified = bool(o.requireVerified, '--require-verified');
  if (o.minTrustScore !== undefined) quality.minTrustScore = o.minTrustScore === 'none' ? null : Number(o.minTrustScore);
  if (o.maxAgeDays !== undefined) quality.maxAgeDays = int(o.maxAgeDays, '--max-age-days');
  if (o.block !== undefined) quality.blockedLibraries = list(o.block);
  if (o.except !== undefined) quality.exceptedLibraries = list(o.except);
  if (o.minStars !== undefined) repo.minStars = int(o.minStars, '--min-stars');
  if (o.licenses !== undefined) repo.allowedLicenses = list(o.licenses);
  if (o.allow !== undefined) lf.select = { ...((lf.select as object) ?? {}), allowedLibraries: list(o.allow) };
  const st = (patch.sourceTypes ??= {}) as Record<string, unknown>;
  for (const t of o.enable ? sourceTypes(o.enable, '--enable') : []) st[t] = { enabled: true };
  for (const t of o.disable ? sourceTypes(o.disable, '--disable') : []) st[t] = { enabled: false };
  return patch;
}

/**
 * `stacks teamspaces|policies|plan|usage|rules|members ...`: the teamspace operations of
 * /api/v2/..., as the operator of the box, in the teamspace named by --teamspace (default: the first).
 */
export function teamsCommand(program: Command): void {
  teamspaceCommands(program);
  policyCommands(program);
  planCommands(program);
  usageCommand(program);
  ruleCommands(program);
  memberCommands(program);
}

function teamspaceCommands(program: Command): void {
  const spaces = program.command('teamspaces').description('teamspaces of this installation (each with its own members, policy, plan and rules)');
  withDataDir(spaces.command('list')).action(async (o: Base) => {
    await withServices(o, async (s) => {
      const { teamspaces: rows } = await s.operations.teamspacesList({}, LOCAL);
      output(o, rows, () => rows.map((t) => `${String(t.id).padStart(4)}  ${t.name}  plan=${t.plan}  members=${t.members}${t.isDefault ? '  (default)' : ''}`));
    });
  });
  withDataDir(spaces.command('create').description("create a teamspace with its first owner; prints the owner's API key once").argument('<name>'))
    .requiredOption('--owner <member>', 'name of the first owner')
    .option('--email <email>', "the owner's e-mail")
    .option('--plan <plan>', PLANS.join('|'), 'enterprise')
    .action(async (name: string, o: Base & { owner: string; email?: string; plan: string }) => {
      await withServices(
        o,
        async (s) => {
          const r = await s.operations.teamspaceCreate({ name, plan: o.plan, owner: o.owner, email: o.email }, LOCAL);
          output(o, r, () => [
            `Created teamspace ${r.teamspace.id} ${r.teamspace.name} (plan ${r.teamspace.plan}) with owner ${r.owner.name}.`,
            `API key of ${r.owner.name} (shown only once):`,
            '',
            r.key.key,
          ]);
        },
        CREATE,
      );
    });
}

function policyCommands(program: Command): void {
  const policies = program.command('policies').description('teamspace policy: source types and library filters');
  withTeam(policies.command('show').description('print the policy as GET /api/v2/policies returns it')).action(async (o: Base) => {
    await withServices(o, async (s) => printJson(await s.operations.policiesGet({}, localIn(o.teamspace))));
  });
  withTeam(policies.command('set').description('change the policy (flags are merged into the current policy)'))
    .option('--patch <json>', 'a partial policy as JSON, merged like PATCH /api/v2/policies')
    .option('--replace', 'start from the default policy instead of the current one (like PUT)')
    .option('--mode <mode>', 'quality|select')
    .option('--require-verified <bool>', 'only verified libraries')
    .option('--min-trust-score <n>', 'minimum trust score 0-10, or none')
    .option('--max-age-days <n>', 'hide libraries not updated for n days (0: off)')
    .option('--block <list>', 'comma-separated library IDs or domain names to block (replaces the list)')
    .option('--except <list>', 'comma-separated library IDs exempt from quality filters')
    .option('--min-stars <n>', 'minimum stars of source repositories')
    .option('--licenses <list>', 'comma-separated allowed licenses of source repositories (empty: any)')
    .option('--allow <list>', 'select mode: comma-separated allowed library IDs')
    .option('--enable <types>', `enable source types (${POLICY_SOURCE_TYPES.join(',')})`)
    .option('--disable <types>', 'disable source types')
    .action(async (o: PolicySetOpts) => {
      await withServices(o, async (s) => printJson(await s.operations.policiesUpdate(policyPatch(o), o.replace === true, localIn(o.teamspace))), CREATE);
    });
}

function planCommands(program: Command): void {
  const plan = program.command('plan').description('teamspace plan, included requests and spending limit');
  withTeam(plan.command('show')).action(async (o: Base) => {
    await withServices(o, async (s) => printJson(await s.operations.teamspaceGet({}, localIn(o.teamspace))));
  });
  withTeam(plan.command('set').description('change plan and limits'))
    .option('--plan <plan>', PLANS.join('|'))
    .option('--included <n>', 'requests included per member and month')
    .option('--spending-limit-cents <n>', 'monthly spending limit in cents, or none')
    .option('--cents-per-extra <x>', 'price of one extra request in cents')
    .action(async (o: Base & { plan?: string; included?: string; spendingLimitCents?: string; centsPerExtra?: string }) => {
      // The contract (PATCH /api/v2/teamspace) checks the plan and the figures.
      const change = {
        plan: o.plan,
        includedRequests: o.included === undefined ? undefined : int(o.included, '--included'),
        spendingLimitCents:
          o.spendingLimitCents === undefined ? undefined : o.spendingLimitCents === 'none' ? null : int(o.spendingLimitCents, '--spending-limit-cents'),
        centsPerExtraRequest: o.centsPerExtra === undefined ? undefined : Number(o.centsPerExtra),
      };
      await withServices(o, async (s) => printJson(await s.operations.teamspaceUpdate(change, localIn(o.teamspace))), CREATE);
    });
}

function usageCommand(program: Command): void {
  withTeam(program.command('usage').description('usage of a member and its teamspace, as GET /api/v2/usage'))
    .option('--member <name>', 'member (default: the first owner)')
    .option('--days <n>', 'days of daily history (1-90; free plans at most 10)', intArg(1, 90), 30)
    .action(async (o: Base & { member?: string; days: number }) => {
      await withServices(o, async (s) => printJson(await s.operations.memberUsage({ member: o.member, days: o.days }, localIn(o.teamspace))));
    });
}

function ruleCommands(program: Command): void {
  const rules = program.command('rules').description('rules returned with context and search answers');
  withTeam(rules.command('list')).action(async (o: Base) => {
    await withServices(o, async (s) => {
      const { rules: rows } = await s.operations.rulesList({}, localIn(o.teamspace));
      output(o, rows, () => rows.map((r) => `${String(r.id).padStart(4)}  ${r.kind}${r.libraryId ? ` ${r.libraryId}` : ''}: ${r.text}`));
    });
  });
  withTeam(rules.command('add').description('add a rule').argument('<text>'))
    .addOption(choiceOption('--kind <kind>', 'kind of rule', RULE_KINDS, 'global'))
    .option('--library <id>', 'library ID (libraryOwn and libraryTeam rules)')
    .action(async (text: string, o: Base & { kind: (typeof RULE_KINDS)[number]; library?: string }) => {
      await withServices(
        o,
        async (s) => {
          const r = await s.operations.ruleAdd({ kind: o.kind, libraryId: o.library ?? null, text }, localIn(o.teamspace));
          output(o, r, () => `Added rule ${r.id}.`);
        },
        CREATE,
      );
    });
  withTeam(rules.command('remove').argument('<id>', 'rule ID', intArg(0))).action(async (id: number, o: Base) => {
    await withServices(o, async (s) => {
      await s.operations.ruleRemove({ id }, localIn(o.teamspace));
      output(o, { id, removed: true }, () => `Removed rule ${id}.`);
    });
  });
}

function memberCommands(program: Command): void {
  const members = program.command('members').description('members of a teamspace and their roles');
  withTeam(members.command('list')).action(async (o: Base) => {
    await withServices(o, async (s) => {
      const { members: rows } = await s.operations.membersList({}, localIn(o.teamspace));
      output(o, rows, () => rows.map((m) => `${String(m.id).padStart(4)}  ${m.name}  ${m.role}${m.email ? `  <${m.email}>` : ''}  keys=${m.keys}`));
    });
  });
  withTeam(members.command('add').description('invite a member; prints its first API key once').argument('<name>'))
    .addOption(choiceOption('--role <role>', 'role', ROLES, 'member'))
    .option('--email <email>')
    .option('--no-key', 'do not create an API key')
    .action(async (name: string, o: Base & { role: Role; email?: string; key: boolean }) => {
      await withServices(
        o,
        async (s) => {
          const added = await s.operations.memberAdd({ name, email: o.email ?? null, role: o.role, createKey: o.key }, localIn(o.teamspace));
          // The key as this command has always printed it (the API answers only its id, key and name).
          const m = added.member;
          const r = { member: m, key: added.key ? { ...added.key, memberId: m.id, memberName: m.name, role: m.role, scope: 'all' } : null };
          output(o, r, () => [
            `Added member ${r.member.id} ${r.member.name} (${r.member.role}).`,
            ...(r.key ? ['API key (shown only once):', '', r.key.key] : []),
          ]);
        },
        CREATE,
      );
    });
  withTeam(members.command('remove').description('remove a member and revoke its keys').argument('<name>')).action(async (name: string, o: Base) => {
    await withServices(o, async (s) => {
      await s.operations.memberRemove({ id: await memberId(s, o, name) }, localIn(o.teamspace));
      output(o, { name, removed: true }, () => `Removed ${name}.`);
    });
  });
  withTeam(
    members
      .command('role')
      .description("change a member's role")
      .addArgument(new Argument('<name>'))
      .addArgument(new Argument('<role>', 'the new role').choices(ROLES)),
  ).action(async (name: string, role: Role, o: Base) => {
    await withServices(o, async (s) => {
      const m = await s.operations.memberRole({ id: await memberId(s, o, name), role }, localIn(o.teamspace));
      output(o, m, () => `${m.name} is now ${m.role}.`);
    });
  });
}
