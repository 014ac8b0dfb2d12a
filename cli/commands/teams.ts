import { Argument, type Command } from 'commander';
import { choiceOption, intArg, output, printJson, withDataDir, withServices, type CommonOpts, recorded } from '../context.ts';
import { ROLES } from './keys.ts';
import type { Services } from '../../server/services.ts';
import type { Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import type { Plan } from '../../server/teams/plans.ts';
import { PLANS } from '../../server/contracts/teams.ts';
import { POLICY_SOURCE_TYPES, type PolicySourceType } from '../../server/contracts/policy.ts';
import type { RuleKindName } from '../../server/teams/rules.ts';

type Base = CommonOpts & { teamspace?: string };
/** Setup commands may create the database of a new installation (see withServices). */
const CREATE = { create: true };

/** The teamspace a command acts on: --teamspace <name>, or the default (first) one. The CLI runs as the box operator. */
function teamspaceId(s: Services, name?: string): number {
  return name ? s.teams.teamspaces.byName(name).id : s.teams.defaultTeamspaceId();
}

function withTeam(cmd: Command): Command {
  return withDataDir(cmd).option('--teamspace <name>', 'teamspace to act on (default: the first one)');
}

const list = (v: string) => v.split(',').map((x) => x.trim()).filter(Boolean);
const RULE_KINDS: readonly RuleKindName[] = ['global', 'libraryOwn', 'libraryTeam'];
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
  for (const t of types) if (!POLICY_SOURCE_TYPES.includes(t as PolicySourceType)) throw new ApiError('validation_error', `${option}: unknown source type "${t}"; one of ${POLICY_SOURCE_TYPES.join(', ')}`);
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
  patch?: string; replace?: boolean; mode?: string; requireVerified?: string; minTrustScore?: string; maxAgeDays?: string;
  block?: string; except?: string; minStars?: string; licenses?: string; allow?: string; enable?: string; disable?: string;
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

/** `stacks teamspaces|policies|plan|usage|rules|members ...`: the teams service, as the operator of the box. */
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
    await withServices(o, (s) => {
      const rows = s.teams.teamspaces.list();
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
        (s) => {
          const r = recorded(s, { action: 'teamspaceCreate', target: name, detail: { owner: o.owner, plan: o.plan } }, () => s.teams.teamspaces.create({ name, plan: o.plan, owner: o.owner, email: o.email ?? null }));
          output(o, r, () => [`Created teamspace ${r.teamspace.id} ${r.teamspace.name} (plan ${r.teamspace.plan}) with owner ${r.owner.name}.`, `API key of ${r.owner.name} (shown only once):`, '', r.key.key]);
        },
        CREATE,
      );
    });
}

function policyCommands(program: Command): void {
  const policies = program.command('policies').description('teamspace policy: source types and library filters');
  withTeam(policies.command('show').description('print the policy as GET /api/v2/policies returns it')).action(async (o: Base) => {
    await withServices(o, (s) => printJson(s.teams.policies.view(teamspaceId(s, o.teamspace))));
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
      await withServices(
        o,
        (s) => {
          const t = teamspaceId(s, o.teamspace);
          const patch = policyPatch(o);
          recorded(s, { action: 'policiesUpdate', teamspaceId: t, detail: patch }, () => s.teams.policies.update(t, patch, o.replace === true));
          printJson(s.teams.policies.view(t));
        },
        CREATE,
      );
    });
}

function planCommands(program: Command): void {
  const plan = program.command('plan').description('teamspace plan, included requests and spending limit');
  withTeam(plan.command('show')).action(async (o: Base) => {
    await withServices(o, (s) => printJson(s.teams.plans.get(teamspaceId(s, o.teamspace))));
  });
  withTeam(plan.command('set').description('change plan and limits'))
    .option('--plan <plan>', PLANS.join('|'))
    .option('--included <n>', 'requests included per member and month')
    .option('--spending-limit-cents <n>', 'monthly spending limit in cents, or none')
    .option('--cents-per-extra <x>', 'price of one extra request in cents')
    .action(async (o: Base & { plan?: string; included?: string; spendingLimitCents?: string; centsPerExtra?: string }) => {
      if (o.plan && !PLANS.includes(o.plan as Plan)) throw new ApiError('validation_error', `--plan must be one of ${PLANS.join(', ')}`);
      const cents = o.centsPerExtra === undefined ? undefined : Number(o.centsPerExtra);
      if (cents !== undefined && !(cents >= 0)) throw new ApiError('validation_error', '--cents-per-extra must be a number >= 0');
      await withServices(
        o,
        (s) => {
          const t = teamspaceId(s, o.teamspace);
          const change = {
            plan: o.plan as Plan | undefined,
            includedRequests: o.included === undefined ? undefined : int(o.included, '--included'),
            spendingLimitCents: o.spendingLimitCents === undefined ? undefined : o.spendingLimitCents === 'none' ? null : int(o.spendingLimitCents, '--spending-limit-cents'),
            centsPerExtraRequest: cents,
          };
          printJson(recorded(s, { action: 'teamspaceUpdate', teamspaceId: t, detail: change }, () => s.teams.plans.update(t, change)));
        },
        CREATE,
      );
    });
}

function usageCommand(program: Command): void {
  withTeam(program.command('usage').description('usage of a member and its teamspace, as GET /api/v2/usage'))
    .option('--member <name>', 'member (default: the first owner)')
    .option('--days <n>', 'days of daily history (1-90; free plans at most 10)', intArg(1, 90), 30)
    .action(async (o: Base & { member?: string; days: number }) => {
      const days = o.days;
      await withServices(o, (s) => {
        const t = teamspaceId(s, o.teamspace);
        const people = s.teams.members.list(t);
        const m = o.member ? s.teams.members.byName(t, o.member) : people.find((x) => x.role === 'owner') ?? people[0];
        if (!m) throw new ApiError('not_found', 'The teamspace has no members.');
        printJson(s.teams.usage.report({ keyId: 0, memberId: m.id, memberName: m.name, teamspaceId: t, role: m.role, scope: 'all' }, days));
      });
    });
}

function ruleCommands(program: Command): void {
  const rules = program.command('rules').description('rules returned with context and search answers');
  withTeam(rules.command('list')).action(async (o: Base) => {
    await withServices(o, (s) => {
      const rows = s.teams.rules.list(teamspaceId(s, o.teamspace));
      output(o, rows, () => rows.map((r) => `${String(r.id).padStart(4)}  ${r.kind}${r.libraryId ? ` ${r.libraryId}` : ''}: ${r.text}`));
    });
  });
  withTeam(rules.command('add').description('add a rule').argument('<text>'))
    .addOption(choiceOption('--kind <kind>', 'kind of rule', RULE_KINDS, 'global'))
    .option('--library <id>', 'library ID (libraryOwn and libraryTeam rules)')
    .action(async (text: string, o: Base & { kind: RuleKindName; library?: string }) => {
      await withServices(
        o,
        (s) => {
          const t = teamspaceId(s, o.teamspace);
          const r = recorded(s, { action: 'ruleAdd', target: o.library ?? null, teamspaceId: t, detail: { kind: o.kind, text } }, () => s.teams.rules.add(t, { kind: o.kind, libraryId: o.library ?? null, text }));
          output(o, r, () => `Added rule ${r.id}.`);
        },
        CREATE,
      );
    });
  withTeam(rules.command('remove').argument('<id>', 'rule ID', intArg(0))).action(async (id: number, o: Base) => {
    await withServices(o, (s) => {
      const t = teamspaceId(s, o.teamspace);
      recorded(s, { action: 'ruleRemove', target: `#${id}`, teamspaceId: t }, () => s.teams.rules.remove(t, id));
      output(o, { id, removed: true }, () => `Removed rule ${id}.`);
    });
  });
}

function memberCommands(program: Command): void {
  const members = program.command('members').description('members of a teamspace and their roles');
  withTeam(members.command('list')).action(async (o: Base) => {
    await withServices(o, (s) => {
      const rows = s.teams.members.list(teamspaceId(s, o.teamspace));
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
        (s) => {
          const t = teamspaceId(s, o.teamspace);
          const r = recorded(s, { action: 'memberAdd', target: name, teamspaceId: t, detail: { role: o.role, key: o.key } }, () => s.teams.members.add(t, 'operator', { name, email: o.email ?? null, role: o.role, createKey: o.key }));
          output(o, r, () => [`Added member ${r.member.id} ${r.member.name} (${r.member.role}).`, ...(r.key ? ['API key (shown only once):', '', r.key.key] : [])]);
        },
        CREATE,
      );
    });
  withTeam(members.command('remove').description('remove a member and revoke its keys').argument('<name>')).action(async (name: string, o: Base) => {
    await withServices(o, (s) => {
      const t = teamspaceId(s, o.teamspace);
      recorded(s, { action: 'memberRemove', target: name, teamspaceId: t }, () => s.teams.members.remove(t, 'operator', s.teams.members.byName(t, name).id));
      output(o, { name, removed: true }, () => `Removed ${name}.`);
    });
  });
  withTeam(members.command('role').description("change a member's role").addArgument(new Argument('<name>')).addArgument(new Argument('<role>', 'the new role').choices(ROLES))).action(
    async (name: string, role: Role, o: Base) => {
      await withServices(o, (s) => {
        const t = teamspaceId(s, o.teamspace);
        const m = recorded(s, { action: 'memberRole', target: name, teamspaceId: t, detail: { role } }, () => s.teams.members.setRole(t, 'operator', s.teams.members.byName(t, name).id, role));
        output(o, m, () => `${m.name} is now ${m.role}.`);
      });
    },
  );
}
