import type { Command } from 'commander';
import { printJson, withDataDir, withServices } from '../context.ts';
import type { Role } from '../../lib/model.ts';

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description('manage API keys');
  withDataDir(keys.command('create').description('create an API key (printed once)'))
    .requiredOption('--name <name>', 'a label for the key')
    .option('--member <name>', 'member that owns the key (created when new; default: the key name)')
    .option('--role <role>', 'owner|admin|member, for a new member (default member)')
    .option('--teamspace <name>', 'teamspace of the member (default: the first one)')
    .action(async (opts: { dataDir?: string; dev?: boolean; name: string; member?: string; role?: string; teamspace?: string }) => {
      const role = (opts.role ?? 'member') as Role;
      if (!['owner', 'admin', 'member'].includes(role)) throw new Error(`--role must be owner, admin or member, not ${opts.role}`);
      await withServices(opts, (s) => {
        // A new member goes through the member service, which enforces the license's maxMembers.
        const memberName = opts.member ?? opts.name;
        const teamspaceId = opts.teamspace ? s.teams.teamspaces.byName(opts.teamspace).id : s.keys.defaultTeamspaceId();
        if (!s.store.accounts.memberByName(teamspaceId, memberName)) s.teams.members.add(teamspaceId, 'operator', { name: memberName, role, createKey: false });
        const k = s.keys.create({ name: opts.name, memberName, role, teamspaceId });
        process.stdout.write(`Created key ${k.id} for ${k.memberName} (${k.role}). It is shown only once:\n\n${k.key}\n`);
      });
    });
  withDataDir(keys.command('list').description('list API keys (never the keys themselves)'))
    .option('--json', 'print JSON')
    .option('--teamspace <name>', 'only the keys of this teamspace (default: all)')
    .action(async (opts: { dataDir?: string; dev?: boolean; json?: boolean; teamspace?: string }) => {
      await withServices(opts, (s) => {
        const only = opts.teamspace ? s.teams.teamspaces.byName(opts.teamspace).id : null;
        const list = s.keys.list().filter((k) => only === null || k.teamspaceId === only);
        if (opts.json) return printJson(list);
        for (const k of list) {
          process.stdout.write(`${String(k.id).padStart(4)}  ${k.prefix}…  ${k.name}  member=${k.memberName} (${k.role})  ${k.revokedAt ? `revoked ${k.revokedAt}` : `created ${k.createdAt}`}\n`);
        }
      });
    });
  withDataDir(keys.command('revoke').description('revoke an API key').argument('<id>', 'key id from `stacks keys list`')).action(
    async (id: string, opts: { dataDir?: string; dev?: boolean }) => {
      await withServices(opts, (s) => {
        s.keys.revoke(Number(id));
        process.stdout.write(`Revoked key ${id}.\n`);
      });
    },
  );
}
