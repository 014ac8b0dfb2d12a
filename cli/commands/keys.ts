import type { Command } from 'commander';
import { choiceOption, intArg, output, withDataDir, withServices, type CommonOpts, recorded } from '../context.ts';
import { KEY_SCOPES, type KeyScope, type Role } from '../../lib/model.ts';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description('manage API keys');
  withDataDir(keys.command('create').description('create an API key (printed once)'))
    .requiredOption('--name <name>', 'a label for the key')
    .option('--member <name>', 'member that owns the key (created when new; default: the key name)')
    .addOption(choiceOption('--role <role>', 'role of a new member', ROLES, 'member'))
    .option('--teamspace <name>', 'teamspace of the member (default: the first one)')
    .addOption(choiceOption('--scope <scope>', 'read: search, context and MCP only (for an AI assistant); all: what the role allows', KEY_SCOPES, 'all'))
    .action(async (opts: CommonOpts & { name: string; member?: string; role: Role; teamspace?: string; scope: KeyScope }) => {
      await withServices(
        opts,
        (s) => {
          // A new member goes through the member service, which enforces the license's maxMembers.
          const memberName = opts.member ?? opts.name;
          const teamspaceId = opts.teamspace ? s.teams.teamspaces.byName(opts.teamspace).id : s.keys.defaultTeamspaceId();
          const k = recorded(s, { action: 'keyCreate', target: opts.name, teamspaceId, detail: { member: memberName, role: opts.role, scope: opts.scope } }, () => {
            if (!s.store.accounts.memberByName(teamspaceId, memberName)) s.teams.members.add(teamspaceId, 'operator', { name: memberName, role: opts.role, createKey: false });
            return s.keys.create({ name: opts.name, memberName, role: opts.role, teamspaceId, scope: opts.scope });
          });
          const scope = k.scope === 'read' ? ', read scope' : '';
          output(opts, { ...k, teamspaceId }, () => `Created key ${k.id} for ${k.memberName} (${k.role}${scope}). It is shown only once:\n\n${k.key}`);
        },
        { create: true },
      );
    });
  withDataDir(keys.command('list').description('list API keys (never the keys themselves)'))
    .option('--teamspace <name>', 'only the keys of this teamspace (default: all)')
    .action(async (opts: CommonOpts & { teamspace?: string }) => {
      await withServices(opts, (s) => {
        const only = opts.teamspace ? s.teams.teamspaces.byName(opts.teamspace).id : null;
        const list = s.keys.list().filter((k) => only === null || k.teamspaceId === only);
        output(opts, list, () =>
          list.map((k) => `${String(k.id).padStart(4)}  ${k.prefix}…  ${k.name}  member=${k.memberName} (${k.role})${k.scope === 'read' ? '  scope=read' : ''}  ${k.revokedAt ? `revoked ${k.revokedAt}` : `created ${k.createdAt}`}`),
        );
      });
    });
  withDataDir(keys.command('revoke').description('revoke an API key').argument('<id>', 'key id from `stacks keys list`', intArg(1))).action(async (id: number, opts: CommonOpts) => {
    await withServices(opts, (s) => {
      const teamspaceId = s.keys.list().find((k) => k.id === id)?.teamspaceId ?? null;
      recorded(s, { action: 'keyRevoke', target: `#${id}`, teamspaceId }, () => s.keys.revoke(id));
      output(opts, { id, revoked: true }, () => `Revoked key ${id}.`);
    });
  });
}
