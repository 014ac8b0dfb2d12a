import type { Command } from 'commander';
import { printJson, withDataDir, withServices } from '../context.ts';
import type { Services } from '../../server/services.ts';
import type { Role } from '../../lib/model.ts';
import { ApiError } from '../../lib/errors.ts';
import { PLANS, type Plan } from '../../server/teams/plans.ts';
import { POLICY_SOURCE_TYPES, type PolicySourceType } from '../../server/teams/policy-schema.ts';
import type { RuleKindName } from '../../server/teams/rules.ts';

type Base = { dataDir?: string; dev?: boolean; teamspace?: string; json?: boolean };

/** The teamspace a command acts on: --teamspace <name>, or the default (first) one. The CLI runs as the box operator. */
function teamspaceId(s: Services, name?: string): number {
  return name ? s.teams.teamspaces.byName(name).id : s.teams.defaultTeamspaceId();
}

function withTeam(cmd: Command): Command {
  return withDataDir(cmd).option('--teamspace <name>', 'teamspace to act on (default: the first one)');
}

const list = (v: string) => v.split(',').map((x) => x.trim()).filter(Boolean);
function bool(v: string): boolean {
  if (['true', 'yes', '1', 'on'].includes(v)) return true;
  if (['false', 'no', '0', 'off'].includes(v)) return false;
  throw new ApiError('validation_error', `expected true or false, not "${v}"`);
}
function int(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new ApiError('validation_error', `expected a whole number >= 0, not "${v}"`);
  return n;
}
function sourceTypes(v: string): PolicySourceType[] {
  const types = list(v);
  for (const t of types) if (!POLICY_SOURCE_TYPES.includes(t as PolicySourceType)) throw new ApiError('validation_error', `unknown source type "${t}"; one of ${POLICY_SOURCE_TYPES.join(', ')}`);
  return types as PolicySourceType[];
}

interface PolicySetOpts extends Base {
  patch?: string; replace?: boolean; mode?: string; requireVerified?: string; minTrustScore?: string; maxAgeDays?: string;
  block?: string; except?: string; minStars?: string; licenses?: string; allow?: string; enable?: string; disable?: string;
}

/** Builds a policy patch from the flags (a --patch JSON object is the base). */
function policyPatch(o: PolicySetOpts): Record<string, unknown> {
  const patch = (o.patch ? JSON.parse(o.patch) : {}) as Record<string, Record<string, unknown>>;
  const lf = (patch.libraryFilters ??= {}) as Record<string, unknown>;
  const quality = (lf.quality ??= {}) as Record<string, unknown>;
  const repo = (quality.repoFilters ??= {}) as Record<string, unknown>;
  if (o.mode) lf.mode = o.mode;
  if (o.requireVerified !== undefined) quality.requireVerified = bool(o.requireVerified);
  if (o.minTrustScore !== undefined) quality.minTrustScore = o.minTrustScore === 'none' ? null : Number(o.minTrustScore);
  if (o.maxAgeDays !== undefined) quality.maxAgeDays = int(o.maxAgeDays);
  if (o.block !== undefined) quality.blockedLibraries = list(o.block);
  if (o.except !== undefined) quality.exceptedLibraries = list(o.except);
  if (o.minStars !== undefined) repo.minStars = int(o.minStars);
  if (o.licenses !== undefined) repo.allowedLicenses = list(o.licenses);
  if (o.allow !== undefined) lf.select = { ...((lf.select as object) ?? {}), allowedLibraries: list(o.allow) };
  const st = (patch.sourceTypes ??= {}) as Record<string, unknown>;
  for (const t of o.enable ? sourceTypes(o.enable) : []) st[t] = { enabled: true };
  for (const t of o.disable ? sourceTypes(o.disable) : []) st[t] = { enabled: false };
  return patch;
}

export function teamsCommand(program: Command): void {
  // ---- teamspaces ----
  const spaces = program.command('teamspaces').description('teamspaces of this installation (each with its own members, policy, plan and rules)');
  withDataDir(spaces.command('list')).option('--json', 'print JSON').action(async (o: Base) => {
    await withServices(o, (s) => {
      const rows = s.teams.teamspaces.list();
      if (o.json) return printJson(rows);
      for (const t of rows) process.stdout.write(`${String(t.id).padStart(4)}  ${t.name}  plan=${t.plan}  members=${t.members}${t.isDefault ? '  (default)' : ''}\n`);
    });
  });
  withDataDir(spaces.command('create').description("create a teamspace with its first owner; prints the owner's API key once").argument('<name>'))
    .requiredOption('--owner <member>', 'name of the first owner')
    .option('--email <email>', "the owner's e-mail")
    .option('--plan <plan>', PLANS.join('|'), 'enterprise')
    .action(async (name: string, o: Base & { owner: string; email?: string; plan: string }) => {
      await withServices(o, (s) => {
        const r = s.teams.teamspaces.create({ name, plan: o.plan, owner: o.owner, email: o.email ?? null });
        process.stdout.write(`Created teamspace ${r.teamspace.id} ${r.teamspace.name} (plan ${r.teamspace.plan}) with owner ${r.owner.name}.\n`);
        process.stdout.write(`API key of ${r.owner.name} (shown only once):\n\n${r.key.key}\n`);
      });
    });

  // ---- policies ----
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
      await withServices(o, (s) => {
        const t = teamspaceId(s, o.teamspace);
        s.teams.policies.update(t, policyPatch(o), o.replace === true);
        printJson(s.teams.policies.view(t));
      });
    });

  // ---- plan and limits ----
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
      await withServices(o, (s) =>
        printJson(
          s.teams.plans.update(teamspaceId(s, o.teamspace), {
            plan: o.plan as Plan | undefined,
            includedRequests: o.included === undefined ? undefined : int(o.included),
            spendingLimitCents: o.spendingLimitCents === undefined ? undefined : o.spendingLimitCents === 'none' ? null : int(o.spendingLimitCents),
            centsPerExtraRequest: cents,
          }),
        ),
      );
    });

  // ---- usage ----
  withTeam(program.command('usage').description('usage of a member and its teamspace, as GET /api/v2/usage'))
    .option('--member <name>', 'member (default: the first owner)')
    .option('--days <n>', 'days of daily history (1-90; free plans at most 10)', '30')
    .action(async (o: Base & { member?: string; days: string }) => {
      const days = int(o.days);
      if (days < 1 || days > 90) throw new ApiError('validation_error', '--days must be 1 to 90');
      await withServices(o, (s) => {
        const t = teamspaceId(s, o.teamspace);
        const people = s.teams.members.list(t);
        const m = o.member ? s.teams.members.byName(t, o.member) : people.find((x) => x.role === 'owner') ?? people[0];
        if (!m) throw new ApiError('not_found', 'The teamspace has no members.');
        printJson(s.teams.usage.report({ keyId: 0, memberId: m.id, memberName: m.name, teamspaceId: t, role: m.role }, days));
      });
    });

  // ---- rules ----
  const rules = program.command('rules').description('rules returned with context and search answers');
  withTeam(rules.command('list')).option('--json', 'print JSON').action(async (o: Base) => {
    await withServices(o, (s) => {
      const rows = s.teams.rules.list(teamspaceId(s, o.teamspace));
      if (o.json) return printJson(rows);
      for (const r of rows) process.stdout.write(`${String(r.id).padStart(4)}  ${r.kind}${r.libraryId ? ` ${r.libraryId}` : ''}: ${r.text}\n`);
    });
  });
  withTeam(rules.command('add').description('add a rule').argument('<text>'))
    .option('--kind <kind>', 'global|libraryOwn|libraryTeam', 'global')
    .option('--library <id>', 'library ID (libraryOwn and libraryTeam rules)')
    .action(async (text: string, o: Base & { kind: string; library?: string }) => {
      if (!['global', 'libraryOwn', 'libraryTeam'].includes(o.kind)) throw new ApiError('validation_error', '--kind must be global, libraryOwn or libraryTeam');
      await withServices(o, (s) => {
        const r = s.teams.rules.add(teamspaceId(s, o.teamspace), { kind: o.kind as RuleKindName, libraryId: o.library ?? null, text });
        process.stdout.write(`Added rule ${r.id}.\n`);
      });
    });
  withTeam(rules.command('remove').argument('<id>')).action(async (id: string, o: Base) => {
    await withServices(o, (s) => {
      s.teams.rules.remove(teamspaceId(s, o.teamspace), int(id));
      process.stdout.write(`Removed rule ${id}.\n`);
    });
  });

  // ---- members ----
  const members = program.command('members').description('members of a teamspace and their roles');
  withTeam(members.command('list')).option('--json', 'print JSON').action(async (o: Base) => {
    await withServices(o, (s) => {
      const rows = s.teams.members.list(teamspaceId(s, o.teamspace));
      if (o.json) return printJson(rows);
      for (const m of rows) process.stdout.write(`${String(m.id).padStart(4)}  ${m.name}  ${m.role}${m.email ? `  <${m.email}>` : ''}  keys=${m.keys}\n`);
    });
  });
  withTeam(members.command('add').description('invite a member; prints its first API key once').argument('<name>'))
    .option('--role <role>', 'owner|admin|member', 'member')
    .option('--email <email>')
    .option('--no-key', 'do not create an API key')
    .action(async (name: string, o: Base & { role: string; email?: string; key: boolean }) => {
      if (!['owner', 'admin', 'member'].includes(o.role)) throw new ApiError('validation_error', '--role must be owner, admin or member');
      await withServices(o, (s) => {
        const r = s.teams.members.add(teamspaceId(s, o.teamspace), 'operator', { name, email: o.email ?? null, role: o.role as Role, createKey: o.key });
        process.stdout.write(`Added member ${r.member.id} ${r.member.name} (${r.member.role}).\n`);
        if (r.key) process.stdout.write(`API key (shown only once):\n\n${r.key.key}\n`);
      });
    });
  withTeam(members.command('remove').description('remove a member and revoke its keys').argument('<name>')).action(async (name: string, o: Base) => {
    await withServices(o, (s) => {
      const t = teamspaceId(s, o.teamspace);
      s.teams.members.remove(t, 'operator', s.teams.members.byName(t, name).id);
      process.stdout.write(`Removed ${name}.\n`);
    });
  });
  withTeam(members.command('role').description("change a member's role").argument('<name>').argument('<role>', 'owner|admin|member')).action(
    async (name: string, role: string, o: Base) => {
      if (!['owner', 'admin', 'member'].includes(role)) throw new ApiError('validation_error', 'role must be owner, admin or member');
      await withServices(o, (s) => {
        const t = teamspaceId(s, o.teamspace);
        const m = s.teams.members.setRole(t, 'operator', s.teams.members.byName(t, name).id, role as Role);
        process.stdout.write(`${m.name} is now ${m.role}.\n`);
      });
    },
  );
}
